"""Every entry of the posenc package: results against the double oracle (posenc.reference), the
layouts, zero-copy in place on views, dtype round trips, positions, caches, tables, configs,
sinusoidal encodings, target capping, the GIL, and bad input (message, and nothing written)."""
from __future__ import annotations

import importlib.metadata
import sys
import threading
import time

import ml_dtypes
import numpy as np
import pytest

import posenc
from conftest import REPO, ulp

BF16 = np.dtype(ml_dtypes.bfloat16)
CONFIGS = sorted((REPO / "tools" / "configs").glob("*.json"))


def partner_max(x: np.ndarray, rotary_dim: int, pairs: str) -> np.ndarray:
    """max(|x|, |partner|) per element of a [..., head_dim] array (rotated channels only)."""
    a = np.abs(x[..., :rotary_dim].astype(np.float64))
    h = rotary_dim // 2
    if pairs == "half":
        p = np.concatenate([a[..., h:], a[..., :h]], axis=-1)
    else:
        p = a.reshape(a.shape[:-1] + (h, 2))[..., ::-1].reshape(a.shape)
    return np.maximum(a, p)


def max_ulp_error(out, x, exact, rotary_dim, pairs, dtype=np.float32):
    """The contract's measure: max |out - exact| in ulp(max(|x|, |partner|)); the pass-through
    channels must equal x bit for bit."""
    head_dim = x.shape[-1]
    if rotary_dim < head_dim:
        assert np.array_equal(out[..., rotary_dim:].view(np.uint8),
                              x[..., rotary_dim:].view(np.uint8))
    err = np.abs(out[..., :rotary_dim].astype(np.float64) - exact[..., :rotary_dim])
    return float(np.max(err / ulp(partner_max(x, rotary_dim, pairs), dtype)))


def normal(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- info and targets
def test_info_names_the_targets():
    info = posenc.info()
    assert info["version"] == posenc.__version__
    # The installed distribution's version (pyproject.toml's regex on project(VERSION)) is the
    # extension's (posenc/version.h, generated from project(VERSION)).
    assert importlib.metadata.version("posenc") == posenc.__version__
    assert info["chosen_target"] in info["supported_targets"]
    assert set(info["supported_targets"]) <= set(info["compiled_targets"])
    assert info["target_environment"] == ""


def test_every_target_gives_the_same_bits(rng):
    q, k = normal(rng, (2, 9, 3, 34)), normal(rng, (2, 9, 1, 34))
    results = {}
    try:
        for target in posenc.info()["supported_targets"]:
            posenc.set_max_target(target)
            assert posenc.info()["chosen_target"] == target
            results[target] = posenc.apply_rope(q, k, base=500000.0, offset=1000)
    finally:
        posenc.set_max_target("")
    first = next(iter(results.values()))
    for target, (oq, ok) in results.items():
        assert np.array_equal(oq, first[0]) and np.array_equal(ok, first[1]), target


def test_set_max_target_rejects_unknown_names():
    with pytest.raises(ValueError, match="AVX9"):
        posenc.set_max_target("AVX9")
    posenc.set_max_target("")
    assert posenc.info()["chosen_target"] == posenc.info()["supported_targets"][0]


# ---------------------------------------------------------------- accuracy against the oracle
@pytest.mark.parametrize("pairs", ["half", "interleaved"])
@pytest.mark.parametrize("rotary_dim", [None, 6, 32])
@pytest.mark.parametrize("arithmetic,bound", [("f64", 2.0), ("f32", 3.0), ("fma_chain", 2.0)])
def test_f32_within_the_contract(rng, pairs, rotary_dim, arithmetic, bound):
    q, k = normal(rng, (2, 17, 4, 34)), normal(rng, (2, 17, 2, 34))
    kw = dict(pairs=pairs, rotary_dim=rotary_dim, base=10000.0, offset=70000)
    oq, ok = posenc.apply_rope(q, k, arithmetic=arithmetic, **kw)
    eq, ek = posenc.reference.apply_rope_f64(q, k, **kw)
    r = rotary_dim or 34
    assert max_ulp_error(oq, q, eq, r, pairs) <= bound
    assert max_ulp_error(ok, k, ek, r, pairs) <= bound


def test_fma_chain_tables_every_target_and_refusals(rng):
    q, k = normal(rng, (1, 40, 4, 64)), normal(rng, (1, 40, 2, 64))
    table = posenc.RopeTable(64, 128, base=500000.0, arithmetic="fma_chain")
    plain = posenc.RopeTable(64, 128, base=500000.0)
    assert np.array_equal(table.cos, plain.cos) and np.array_equal(table.sin, plain.sin)
    on_the_fly = posenc.apply_rope(q, k, base=500000.0, offset=50, arithmetic="fma_chain")
    eq, ek = posenc.reference.apply_rope_f64(q, k, base=500000.0, offset=50)
    assert max_ulp_error(on_the_fly[0], q, eq, 64, "half") < 2.0
    assert max_ulp_error(on_the_fly[1], k, ek, 64, "half") < 2.0
    f64 = posenc.apply_rope(q, k, base=500000.0, offset=50)
    assert not np.array_equal(on_the_fly[0], f64[0])  # its own bits, not kF64's
    try:
        for target in posenc.info()["supported_targets"]:
            posenc.set_max_target(target)
            oq, ok = posenc.apply_rope(q, k, table=table, offset=50, arithmetic="fma_chain")
            assert np.array_equal(oq, on_the_fly[0]) and np.array_equal(ok, on_the_fly[1]), target
    finally:
        posenc.set_max_target("")
    with pytest.raises(ValueError, match="source.table has no lo rows"):
        posenc.apply_rope(q, k, table=plain, offset=50, arithmetic="fma_chain")
    with pytest.raises(ValueError, match="arithmetic"):
        posenc.RopeTable(64, 128, arithmetic="f16")


def test_reference_is_the_f64_result_rounded_once(rng):
    q = normal(rng, (1, 5, 3, 16))
    for dtype in (np.float32, np.float16):
        x = q.astype(dtype)
        (rounded, _), (exact, _) = (posenc.reference.apply_rope(x, offset=3),
                                    posenc.reference.apply_rope_f64(x, offset=3))
        assert rounded.dtype == dtype and exact.dtype == np.float64
        assert np.array_equal(rounded, exact.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_half_types_round_trip_within_one_storage_ulp(rng, dtype):
    q = normal(rng, (2, 7, 3, 20)).astype(dtype)
    k = normal(rng, (2, 7, 1, 20)).astype(dtype)
    oq, ok = posenc.apply_rope(q, k, rotary_dim=12, pairs="interleaved", offset=40)
    assert oq.dtype == dtype and ok.dtype == dtype
    assert oq.shape == q.shape and ok.shape == k.shape
    eq, ek = posenc.reference.apply_rope_f64(q, k, rotary_dim=12, pairs="interleaved", offset=40)
    info_dtype = np.float16 if dtype == np.float16 else BF16
    assert max_ulp_error(oq, q, eq, 12, "interleaved", info_dtype) <= 1.0
    assert max_ulp_error(ok, k, ek, 12, "interleaved", info_dtype) <= 1.0
    # Forward then inverse: two roundings to the storage type (<= 1 ulp of the pair's max each,
    # the rotation preserving the pair's norm) and nothing else.
    back, _ = posenc.apply_rope(oq, rotary_dim=12, pairs="interleaved", offset=40, inverse=True)
    err = np.abs(back[..., :12].astype(np.float64) - q[..., :12].astype(np.float64))
    assert np.max(err / ulp(np.sqrt(2) * partner_max(q, 12, "interleaved"), info_dtype)) <= 2
    assert np.array_equal(back[..., 12:].view(np.uint16), q[..., 12:].view(np.uint16))


def test_inverse_undoes_forward(rng):
    q = normal(rng, (1, 33, 2, 64))
    fwd, _ = posenc.apply_rope(q, base=500000.0)
    back, _ = posenc.apply_rope(fwd, base=500000.0, inverse=True)
    assert np.max(np.abs(back - q) / ulp(partner_max(q, 64, "half"))) <= 5
    exact, _ = posenc.reference.apply_rope_f64(q, base=500000.0, inverse=True)
    assert max_ulp_error(posenc.apply_rope(q, base=500000.0, inverse=True)[0], q, exact, 64,
                         "half") <= 2


def test_attention_factor_scales_cos_and_sin(rng):
    q = normal(rng, (1, 8, 2, 16))
    out, _ = posenc.apply_rope(q, attention_factor=0.75, offset=5)
    exact, _ = posenc.reference.apply_rope_f64(q, attention_factor=0.75, offset=5)
    assert max_ulp_error(out, q, exact, 16, "half") <= 2
    plain, _ = posenc.reference.apply_rope_f64(q, offset=5)
    np.testing.assert_allclose(exact, 0.75 * plain, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- layouts and views
def test_layouts_bshd_bhsd_and_3d_agree(rng):
    bshd = normal(rng, (2, 6, 4, 16))
    k_bshd = normal(rng, (2, 6, 2, 16))
    ref_q, ref_k = posenc.apply_rope(bshd, k_bshd, offset=9)
    bhsd = np.ascontiguousarray(bshd.transpose(0, 2, 1, 3))
    k_bhsd = np.ascontiguousarray(k_bshd.transpose(0, 2, 1, 3))
    oq, ok = posenc.apply_rope(bhsd, k_bhsd, layout="bhsd", offset=9)
    assert oq.shape == bhsd.shape
    assert np.array_equal(oq.transpose(0, 2, 1, 3), ref_q)
    assert np.array_equal(ok.transpose(0, 2, 1, 3), ref_k)
    q3, k3 = bshd.reshape(2, 6, 64), k_bshd.reshape(2, 6, 32)
    oq3, ok3 = posenc.apply_rope(q3, k3, num_heads=4, num_kv_heads=2, offset=9)
    assert oq3.shape == (2, 6, 64)
    assert np.array_equal(oq3.reshape(2, 6, 4, 16), ref_q)
    assert np.array_equal(ok3.reshape(2, 6, 2, 16), ref_k)


def test_fused_qkv_slices_in_place(rng):
    hq, hkv, d, tokens = 4, 2, 16, 11
    qkv = normal(rng, (1, tokens, (hq + 2 * hkv) * d))
    before = qkv.copy()
    q = qkv[:, :, : hq * d]
    k = qkv[:, :, hq * d: (hq + hkv) * d]
    expected_q, expected_k = posenc.apply_rope(np.ascontiguousarray(q), np.ascontiguousarray(k),
                                               num_heads=hq, num_kv_heads=hkv, base=500000.0)
    oq, ok = posenc.apply_rope(q, k, out_q=q, out_k=k, num_heads=hq, num_kv_heads=hkv,
                               base=500000.0)
    assert oq is q and ok is k
    assert np.shares_memory(oq, qkv)
    assert np.array_equal(qkv[:, :, : hq * d], expected_q)
    assert np.array_equal(qkv[:, :, hq * d: (hq + hkv) * d], expected_k)
    assert np.array_equal(qkv[:, :, (hq + hkv) * d:], before[:, :, (hq + hkv) * d:])  # v


def test_padded_and_transposed_views_in_place(rng):
    buf = normal(rng, (3, 10, 5, 24))  # head_dim 16 inside rows of 24: padding must survive
    view = buf[:, :, :, :16]
    before = buf.copy()
    expected, _ = posenc.apply_rope(np.ascontiguousarray(view), pairs="interleaved")
    posenc.apply_rope(view, out_q=view, pairs="interleaved")
    assert np.array_equal(buf[..., :16], expected)
    assert np.array_equal(buf[..., 16:], before[..., 16:])
    # A BHSD view of BSHD memory (and the other way round) is just strides.
    t = buf[:, :, :, :16].transpose(0, 2, 1, 3)
    out, _ = posenc.apply_rope(t, layout="bhsd", pairs="interleaved")
    assert np.array_equal(out.transpose(0, 2, 1, 3),
                          posenc.apply_rope(np.ascontiguousarray(buf[..., :16]),
                                            pairs="interleaved")[0])


def test_out_of_place_leaves_input_and_uses_given_outputs(rng):
    q = normal(rng, (1, 4, 2, 8))
    keep = q.copy()
    out = np.zeros_like(q)
    oq, ok = posenc.apply_rope(q, out_q=out, rotary_dim=4)
    assert oq is out and ok is None
    assert np.array_equal(q, keep)
    assert np.array_equal(out[..., 4:], q[..., 4:])  # pass-through copied
    assert not np.array_equal(out[..., :4], q[..., :4])


def test_k_only(rng):
    k = normal(rng, (1, 3, 2, 8))
    oq, ok = posenc.apply_rope(None, k, offset=2)
    assert oq is None
    assert np.array_equal(ok, posenc.apply_rope(k, offset=2)[0])


# ---------------------------------------------------------------- positions
def test_positions_ids_per_batch_offsets_and_broadcast(rng):
    q = normal(rng, (2, 5, 2, 8))
    ids = np.array([[3, 1, 4, 1, 5], [-9, 2, 6, 5, 3]], dtype=np.int64)
    out64, _ = posenc.apply_rope(q, positions=ids)
    out32, _ = posenc.apply_rope(q, positions=ids.astype(np.int32))
    assert np.array_equal(out64, out32)
    exact, _ = posenc.reference.apply_rope_f64(q, positions=ids)
    assert max_ulp_error(out64, q, exact, 8, "half") <= 2
    # Per-batch offsets == the equivalent ids; [seq] ids are shared by every batch.
    per_batch, _ = posenc.apply_rope(q, offset=np.array([10, 20]))
    ids_pb = np.array([np.arange(10, 15), np.arange(20, 25)], dtype=np.int64)
    assert np.array_equal(per_batch, posenc.apply_rope(q, positions=ids_pb)[0])
    shared, _ = posenc.apply_rope(q, positions=np.arange(7, 12, dtype=np.int32))
    assert np.array_equal(shared, posenc.apply_rope(q, offset=7)[0])


# ---------------------------------------------------------------- frequencies, tables, caches
def test_explicit_inv_freq_and_table(rng):
    q = normal(rng, (1, 12, 3, 32))
    table = posenc.RopeTable(32, 64, base=500000.0)
    assert (table.rotary_dim, table.max_positions, table.attention_factor) == (32, 64, 1.0)
    assert table.cos.shape == (64, 16) and not table.cos.flags.writeable
    on_the_fly, _ = posenc.apply_rope(q, base=500000.0, offset=50)
    assert np.array_equal(posenc.apply_rope(q, table=table, offset=50)[0], on_the_fly)
    assert np.array_equal(posenc.apply_rope(q, inv_freq=table.inv_freq, offset=50)[0], on_the_fly)
    # Caller caches holding the table's values give the same bits.
    assert np.array_equal(posenc.apply_rope(q, cos=table.cos, sin=table.sin, offset=50)[0],
                          on_the_fly)
    np.testing.assert_allclose(table.inv_freq, 500000.0 ** (-np.arange(0, 32, 2) / 32), rtol=1e-15)
    with pytest.raises(IndexError, match="outside the table"):
        posenc.apply_rope(q, table=table, offset=60)


@pytest.mark.parametrize("cache_dtype", [np.float32, np.float16, BF16])
def test_caller_caches_by_position_and_per_token(rng, cache_dtype):
    q = normal(rng, (2, 4, 3, 12))
    rows = 30
    angles = np.arange(rows)[:, None] * 0.1 * (np.arange(4) + 1)[None, :]
    cos, sin = np.cos(angles).astype(cache_dtype), np.sin(angles).astype(cache_dtype)
    ids = np.array([[0, 7, 29, 3], [5, 5, 6, 1]], dtype=np.int64)
    out, _ = posenc.apply_rope(q, cos=cos, sin=sin, positions=ids, rotary_dim=8)
    exact, _ = posenc.reference.apply_rope_f64(q, cos=cos, sin=sin, positions=ids, rotary_dim=8)
    assert max_ulp_error(out, q, exact, 8, "half") <= 2
    # The same rows given per token.
    per_token_cos, per_token_sin = cos[ids], sin[ids]
    out_pt, _ = posenc.apply_rope(q, cos=per_token_cos, sin=per_token_sin, rotary_dim=8)
    assert np.array_equal(out_pt, out)
    with pytest.raises(IndexError, match="positions"):
        posenc.apply_rope(q, cos=cos, sin=sin, positions=ids + 1, rotary_dim=8)


# ---------------------------------------------------------------- configs
@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_shipped_config_loads_and_applies(rng, path):
    config = posenc.load_hf_config(str(path))
    assert config.layer_types and all(t is None or t in config.layer_types for t in config.layers)
    for layer_type in config.layer_types:
        f = posenc.frequencies(config, 4096, layer_type)
        assert len(f.inv_freq) == f.rotary_dim // 2
        q = normal(rng, (1, 3, 2, f.head_dim))
        # ApplyRope(config) uses L = max position + 1 = 4096 here and the config's pair layout:
        # the same bits as the explicit frequencies with that layout.
        by_config, _ = posenc.apply_rope(q, config=config, offset=4093, layer_type=layer_type)
        by_freqs, _ = posenc.apply_rope(q, inv_freq=f.inv_freq, attention_factor=f.attention_factor,
                                        rotary_dim=f.rotary_dim, offset=4093, pairs=f.pairs)
        assert np.array_equal(by_config, by_freqs), layer_type


def test_multi_type_model_needs_a_layer_type(rng):
    config = posenc.load_hf_config(str(REPO / "tools/configs/gemma-3-4b-it.json"))
    assert config.layer_types == ["sliding_attention", "full_attention"]
    assert config.layers[:6] == ["sliding_attention"] * 5 + ["full_attention"]
    local = posenc.frequencies(config, 0, "sliding_attention")
    full = posenc.frequencies(config, 0, "full_attention")
    # Gemma 3: base 10^4 on sliding layers; 10^6 with linear factor 8 on full layers.
    assert local.inv_freq[1] == pytest.approx(10000.0 ** (-2 / local.rotary_dim), rel=1e-15)
    assert full.inv_freq[1] == pytest.approx(1e6 ** (-2 / full.rotary_dim) / 8, rel=1e-15)
    q = normal(rng, (1, 2, 1, local.head_dim))
    with pytest.raises(ValueError, match="sliding_attention, full_attention"):
        posenc.apply_rope(q, config=config)
    with pytest.raises(ValueError, match="sliding_attention, full_attention"):
        posenc.frequencies(config, 0, None)


def test_config_pair_layout_is_the_default_and_can_be_overridden(rng):
    config = posenc.load_hf_config(str(REPO / "tools/configs/gpt-j-6b.json"))
    assert config.pairs == "interleaved"
    f = posenc.frequencies(config, 0, None)
    q = normal(rng, (1, 3, 2, f.head_dim))
    kw = dict(inv_freq=f.inv_freq, rotary_dim=f.rotary_dim, offset=5)
    default, _ = posenc.apply_rope(q, config=config, offset=5)
    assert np.array_equal(default, posenc.apply_rope(q, pairs="interleaved", **kw)[0])
    half, _ = posenc.apply_rope(q, config=config, offset=5, pairs="half")
    assert np.array_equal(half, posenc.apply_rope(q, pairs="half", **kw)[0])
    assert not np.array_equal(half, default)


def test_config_errors_name_the_key_and_the_layer_type():
    config = posenc.parse_hf_config('{"head_dim": 64, "rope_theta": 500000}')
    assert (config.rope_type, config.rope_theta, config.head_dim) == ("default", 500000.0, 64)
    with pytest.raises(ValueError, match='sliding_attention.*full_attention'):
        posenc.frequencies(config, 0, "sliding_attention")
    with pytest.raises(ValueError, match="factor"):
        posenc.parse_hf_config('{"head_dim": 64, "rope_scaling": {"rope_type": "linear"}}')
    with pytest.raises(ValueError, match="cannot open"):
        posenc.load_hf_config("/nonexistent/config.json")
    q = np.zeros((1, 1, 1, 64), np.float32)
    with pytest.raises(ValueError, match="layer_type.*needs config"):
        posenc.apply_rope(q, layer_type="full_attention")
    with pytest.raises(ValueError, match="config"):
        posenc.apply_rope(q, config=config, inv_freq=np.ones(32))


# ---------------------------------------------------------------- sinusoidal
def test_sinusoidal_worked_example_and_conventions():
    # docs/math.md §6's seed example: d = 4, p = 0..3, interleaved (4-5 printed digits).
    printed = np.array([[0, 1, 0, 1], [0.8415, 0.5403, 0.0100, 0.99995],
                        [0.9093, -0.4161, 0.0200, 0.99980], [0.1411, -0.9900, 0.0300, 0.99955]])
    pe = posenc.sinusoidal(4, 4)
    assert pe.shape == (4, 4) and pe.dtype == np.float32
    np.testing.assert_allclose(pe, printed, atol=6e-5)
    p = np.arange(4)[:, None] * 10000.0 ** (-np.arange(0, 8, 2) / 8)[None, :]
    sin, cos = np.sin(p), np.cos(p)
    np.testing.assert_allclose(posenc.sinusoidal(8, 4, convention="concat_sin_cos"),
                               np.concatenate([sin, cos], 1), atol=1e-7)
    np.testing.assert_allclose(posenc.sinusoidal(8, 4, convention="concat_cos_sin"),
                               np.concatenate([cos, sin], 1), atol=1e-7)
    t2t = np.arange(4)[:, None] * 10000.0 ** (-np.arange(4) / 3)[None, :]
    np.testing.assert_allclose(posenc.sinusoidal(8, 4, convention="concat_sin_cos", spacing="t2t"),
                               np.concatenate([np.sin(t2t), np.cos(t2t)], 1), atol=1e-7)
    ids = np.array([[5, 2], [0, 9]], dtype=np.int64)
    by_ids = posenc.sinusoidal(6, positions=ids, dtype=np.float16)
    assert by_ids.shape == (2, 2, 6) and by_ids.dtype == np.float16
    table = posenc.sinusoidal(6, 10, dtype=np.float16)
    assert np.array_equal(by_ids, table[ids])
    assert np.array_equal(posenc.sinusoidal(6, 3, offset=4, position_offset=2),
                          posenc.sinusoidal(6, 10)[6:9])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_add_sinusoidal_is_table_plus_scaled_x(rng, dtype):
    x = normal(rng, (2, 5, 8)).astype(dtype)
    pe = posenc.sinusoidal(8, 12)  # f32 table rows
    offsets = np.array([0, 7])
    out = posenc.add_sinusoidal(x, offset=offsets, x_scale=2.0)
    rows = pe[np.arange(5)[None, :] + offsets[:, None]]
    expected = (x.astype(np.float64) * 2.0 + rows.astype(np.float64)).astype(np.float32)
    if dtype == np.float32:
        assert np.array_equal(out, expected)
    else:
        # The f32 result rounded to the storage type (posenc rounds the double sum once).
        np.testing.assert_array_max_ulp(out.astype(np.float32),
                                        expected.astype(dtype).astype(np.float32), 1)
    # In place on a strided view.
    buf = x.astype(np.float32)
    wide = np.zeros((2, 5, 12), np.float32)
    wide[..., :8] = buf
    view = wide[..., :8]
    assert posenc.add_sinusoidal(view, out=view, offset=offsets, x_scale=2.0) is view
    assert np.array_equal(wide[..., :8], (buf.astype(np.float64) * 2.0
                                          + rows.astype(np.float64)).astype(np.float32))
    assert not wide[..., 8:].any()


# ---------------------------------------------------------------- the GIL
def test_kernel_calls_release_the_gil(rng):
    q = normal(rng, (1, 512, 32, 64))  # the reference takes long enough to switch threads
    window = {}

    def work():
        window["start"] = time.perf_counter()
        posenc.reference.apply_rope(q, base=500000.0)
        window["end"] = time.perf_counter()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        t = threading.Thread(target=work)
        stamps = []
        t.start()
        while t.is_alive():
            stamps.append(time.perf_counter())
        t.join()
    finally:
        sys.setswitchinterval(old)
    inside = [s for s in stamps if window["start"] < s < window["end"]]
    # Holding the GIL through the call would leave this thread no turn inside the window.
    assert len(inside) > 100, (len(inside), window["end"] - window["start"])


# ---------------------------------------------------------------- bad input
def test_bad_input_raises_with_the_library_message_and_writes_nothing(rng):
    q = normal(rng, (1, 4, 2, 8))
    out = np.full_like(q, 7.0)
    with pytest.raises(ValueError, match=r"rotary_dim = 7: must be even"):
        posenc.apply_rope(q, out_q=out, rotary_dim=7)
    assert (out == 7.0).all()
    with pytest.raises(ValueError, match=r"q.dtype = float64"):
        posenc.apply_rope(q.astype(np.float64))
    with pytest.raises(ValueError, match="stride"):
        posenc.apply_rope(q[:, ::-1])  # negative strides
    # A byte stride that is not a whole number of elements (numpy allows it; posenc refuses).
    odd = np.ndarray((1, 4, 2, 8), np.float32, np.zeros(1024, np.uint8), 0, (512, 128, 64, 6))
    with pytest.raises(ValueError, match="q: stride of 6 bytes on axis 3"):
        posenc.apply_rope(odd)
    with pytest.raises(ValueError, match="out_q: stride of 6 bytes on axis 3"):
        posenc.apply_rope(q, out_q=odd)
    with pytest.raises(ValueError, match="pairs = 'zigzag'"):
        posenc.apply_rope(q, pairs="zigzag")
    with pytest.raises(ValueError, match="arithmetic"):
        posenc.apply_rope(q, arithmetic="f16")
    with pytest.raises(ValueError, match="layout"):
        posenc.apply_rope(q, layout="sbhd")
    with pytest.raises(ValueError, match="num_heads"):
        posenc.apply_rope(q.reshape(1, 4, 16))
    with pytest.raises(ValueError, match="out_q.shape"):
        posenc.apply_rope(q, out_q=np.zeros((1, 4, 2, 4), np.float32))
    with pytest.raises(ValueError, match="read only"):
        ro = q.copy()
        ro.flags.writeable = False
        posenc.apply_rope(q, out_q=ro)
    with pytest.raises(ValueError, match="positions.shape"):
        posenc.apply_rope(q, positions=np.zeros((1, 3), np.int64))
    with pytest.raises(ValueError, match="positions.dtype"):
        posenc.apply_rope(q, positions=np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError, match="cos and sin"):
        posenc.apply_rope(q, cos=np.ones((4, 4), np.float32))
    with pytest.raises(ValueError, match=r"cos.shape = \(4, 3\)"):
        posenc.apply_rope(q, cos=np.ones((4, 3), np.float32), sin=np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="base"):
        posenc.apply_rope(q, base=-1.0)
    with pytest.raises(ValueError, match="inv_freq"):
        posenc.apply_rope(q, inv_freq=np.ones(3))
    with pytest.raises(ValueError, match="k.dtype"):
        posenc.apply_rope(q, q.astype(np.float16))
    with pytest.raises(ValueError, match="at least one"):
        posenc.apply_rope(None)
    with pytest.raises(TypeError, match="numpy array"):
        posenc.apply_rope([[1.0, 2.0]])
    with pytest.raises(TypeError, match="RopeTable"):
        posenc.apply_rope(q, table="table")
    # q and k overlapping: the library refuses (nothing written).
    buf = normal(rng, (1, 4, 3, 8))
    keep = buf.copy()
    with pytest.raises(ValueError, match="overlap"):
        posenc.apply_rope(buf[:, :, :2], buf[:, :, 1:], out_q=buf[:, :, :2], out_k=buf[:, :, 1:])
    assert np.array_equal(buf, keep)
    with pytest.raises(ValueError, match="convention"):
        posenc.sinusoidal(8, 4, convention="paper")
    with pytest.raises(ValueError, match="d_model"):
        posenc.sinusoidal(7, 4)


def test_onnxruntime_example_runs():
    pytest.importorskip("onnxruntime", reason="needs onnxruntime (tools/setup.sh --python)")
    import re
    import subprocess

    script = REPO / "tools" / "examples" / "check_against_onnxruntime.py"
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    found = dict(re.findall(r"^(\w+ +vs \w+).*: +([0-9.]+) ulp$", out.stdout, re.M))
    assert len(found) == 3, out.stdout
    assert float(found["posenc      vs exact"]) <= 2.0, out.stdout
    assert float(found["onnxruntime vs posenc"]) <= 4.0, out.stdout

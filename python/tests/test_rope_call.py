"""posenc.RopeCall: apply_rope's bits over several steps for every source, dtype, layout and kind
of positions; the double oracle's bound; errors at construction (apply_rope's) and per call
(nothing written); the arrays held for the call's life; two threads on one RopeCall."""
from __future__ import annotations

import gc
import threading

import ml_dtypes
import numpy as np
import pytest

import posenc
from conftest import REPO, ulp

BF16 = np.dtype(ml_dtypes.bfloat16)
HEADS, KV_HEADS, HEAD = 4, 2, 24  # head_dim 24: 12 pairs, a tail on every SIMD width


def bits(a):
    return None if a is None else a.view(np.uint8).copy()


def shape_of(layout, batch, seq, heads, head_dim):
    if layout == "bshd":
        return (batch, seq, heads, head_dim)
    if layout == "bhsd":
        return (batch, heads, seq, head_dim)
    return (batch, seq, heads * head_dim)  # 3-D, with num_heads


def make_qk(rng, layout, dtype, batch=2, seq=3):
    q = rng.standard_normal(shape_of(layout, batch, seq, HEADS, HEAD)).astype(dtype)
    k = rng.standard_normal(shape_of(layout, batch, seq, KV_HEADS, HEAD)).astype(dtype)
    return q, k


def sources(rng, batch=2, seq=3, half=HEAD // 2):
    table = posenc.RopeTable(2 * half, 64, base=1000.0)
    angles = np.arange(64)[:, None] * (1000.0 ** (-np.arange(half) / half))[None, :]
    per_token = rng.uniform(0, 6, (batch, seq, half))
    return {
        "default": {},
        "inv_freq": {"inv_freq": 0.5 ** np.arange(half), "attention_factor": 0.75},
        "table": {"table": table},
        "cache_f32": {"cos": np.cos(angles).astype(np.float32),
                      "sin": np.sin(angles).astype(np.float32)},
        "cache_bf16": {"cos": np.cos(angles).astype(BF16), "sin": np.sin(angles).astype(BF16)},
        "cache_per_token": {"cos": np.cos(per_token).astype(np.float32),
                            "sin": np.sin(per_token).astype(np.float32)},
    }


def steps(batch=2, seq=3):
    """Three steps' positions, as (positions, offset) pairs of every kind the call takes."""
    return [(None, 5), (np.array([7, 1, 30], np.int32), 0),
            (np.array([[2, 9, 4], [40, 0, 11]], np.int64), 0), (None, np.array([3, 17]))]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
@pytest.mark.parametrize("source", ["default", "inv_freq", "table", "cache_f32", "cache_bf16",
                                    "cache_per_token"])
@pytest.mark.parametrize("in_place", [False, True])
def test_steps_equal_apply_rope(rng, dtype, source, in_place):
    q, k = make_qk(rng, "bshd", dtype)
    kw = sources(rng)[source]
    oq, ok = (q, k) if in_place else (np.empty_like(q), np.empty_like(k))
    call = posenc.RopeCall(q, k, out_q=oq, out_k=ok, **kw)
    for positions, offset in steps():
        if source == "cache_per_token" and positions is not None:
            continue  # per-token caches take no positions (test_call_errors_write_nothing)
        q[...] = rng.standard_normal(q.shape).astype(dtype)  # the step's new q and k
        k[...] = rng.standard_normal(k.shape).astype(dtype)
        want_q, want_k = posenc.apply_rope(q, k, positions=positions, offset=offset, **kw)
        got_q, got_k = call(positions=positions, offset=offset)
        assert got_q is oq and got_k is ok
        assert np.array_equal(bits(got_q), bits(want_q)) and np.array_equal(bits(got_k),
                                                                            bits(want_k))


@pytest.mark.parametrize("layout", ["bshd", "bhsd", "3d"])
@pytest.mark.parametrize("options", [{}, {"pairs": "interleaved"}, {"inverse": True},
                                     {"rotary_dim": 16}, {"arithmetic": "f32"},
                                     {"threads": 2}])
def test_layouts_and_options_equal_apply_rope(rng, layout, options):
    q, k = make_qk(rng, layout, np.float32)
    kw = dict(options, base=500000.0)
    if layout == "3d":
        kw.update(num_heads=HEADS, num_kv_heads=KV_HEADS)
    else:
        kw["layout"] = layout if layout == "bhsd" else "bshd"
    call = posenc.RopeCall(q, k, **kw)  # outputs allocated once, by the call
    out_q, out_k = call.out_q, call.out_k
    assert out_q.shape == q.shape and out_k.dtype == k.dtype
    for positions, offset in steps():
        want_q, want_k = posenc.apply_rope(q, k, positions=positions, offset=offset, **kw)
        got_q, got_k = call(positions, offset)
        assert got_q is out_q and got_k is out_k
        assert np.array_equal(bits(got_q), bits(want_q)) and np.array_equal(bits(got_k),
                                                                            bits(want_k))


@pytest.mark.parametrize("which", ["q", "k"])
def test_one_tensor(rng, which):
    q, k = make_qk(rng, "bshd", np.float32)
    args = (q, None) if which == "q" else (None, k)
    call = posenc.RopeCall(*args, base=10000.0)
    got = call(offset=9)
    want = posenc.apply_rope(*args, offset=9, base=10000.0)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            assert np.array_equal(bits(g), bits(w))


def test_within_the_bound_of_the_double_oracle(rng):
    # The contract itself, not only apply_rope's bits: B = 2 ulp of max(|x|, |y|) (kF64, f32).
    q = (rng.standard_normal((1, 4, 8, 64)) * np.exp2(rng.integers(-20, 20, (1, 4, 8, 1)))
         ).astype(np.float32)
    call = posenc.RopeCall(q, base=500000.0)
    for offset in (0, 1000, 123456):
        got, _ = call(offset=offset)
        exact, _ = posenc.reference.apply_rope_f64(q, offset=offset, base=500000.0)
        m = np.abs(q.astype(np.float64))
        partner = np.concatenate([m[..., 32:], m[..., :32]], axis=-1)
        err = np.abs(got.astype(np.float64) - exact) / ulp(np.maximum(m, partner))
        assert err.max() < 2.0
        assert offset == 0 or err.max() > 0  # rotated, not copied


@pytest.mark.parametrize("bad, match", [
    ({"pairs": "diagonal"}, "pairs"),
    ({"rotary_dim": 7}, "rotary_dim"),
    ({"arithmetic": "f16"}, "arithmetic"),
    ({"out_q": np.empty((2, 3, HEADS, HEAD + 1), np.float32)}, "out_q.shape"),
    ({"inv_freq": np.ones(3)}, "inv_freq"),
    ({"base": -1.0}, "base"),
])
def test_construction_errors_are_apply_rope_s(rng, bad, match):
    q, k = make_qk(rng, "bshd", np.float32)
    with pytest.raises(ValueError, match=match) as via_apply:
        posenc.apply_rope(q, k, **bad)
    with pytest.raises(ValueError, match=match) as via_call:
        posenc.RopeCall(q, k, **bad)
    assert str(via_call.value) == str(via_apply.value)


def test_call_errors_write_nothing(rng):
    q, k = make_qk(rng, "bshd", np.float32)
    s = sources(rng)
    out_q, out_k = np.full_like(q, 7.0), np.full_like(k, 7.0)
    cases = [
        ({"table": s["table"]["table"]}, {"offset": 62}, IndexError, "position"),  # 62 + 2 > 64
        ({}, {"positions": np.zeros((2, 4), np.int64)}, ValueError, "positions.shape"),
        ({}, {"positions": np.zeros(3, np.float32)}, ValueError, "positions.dtype"),
        ({}, {"positions": np.zeros(3, np.int32), "offset": 2}, ValueError, "positions and offset"),
        ({}, {"offset": np.array([1, 2, 3])}, ValueError, "offset"),
        ({"table": s["table"]["table"]}, {"offset": -1}, IndexError, "= -1"),
        (s["cache_per_token"], {"positions": np.zeros(3, np.int32)}, ValueError, "per-token"),
    ]
    for kw, call_kw, error, match in cases:
        call = posenc.RopeCall(q, k, out_q=out_q, out_k=out_k, **kw)
        with pytest.raises(error, match=match):
            call(**call_kw)
        assert np.all(out_q == 7.0) and np.all(out_k == 7.0), call_kw
        call(offset=1)  # the RopeCall still works after a refused call
        assert not np.all(out_q == 7.0)
        out_q.fill(7.0)
        out_k.fill(7.0)


def test_holds_its_arrays(rng):
    q0, k0 = make_qk(rng, "bshd", np.float32)
    want = posenc.apply_rope(q0, k0, offset=3)
    call = posenc.RopeCall(q0.copy(), k0.copy())  # the only references are the call's
    gc.collect()
    got = call(offset=3)
    assert np.array_equal(bits(got[0]), bits(want[0])) and np.array_equal(bits(got[1]),
                                                                          bits(want[1]))
    q = np.zeros((1, 2, HEADS, HEAD), np.float32)
    held = posenc.RopeCall(q, out_q=q)
    with pytest.raises((ValueError, BufferError)):
        q.resize((1, 4, HEADS, HEAD))  # would move the data the call points to
    del held
    gc.collect()
    q.resize((1, 4, HEADS, HEAD))  # released with the call


def test_two_threads_take_turns(rng):
    # One thread rotates at scattered positions (a cos/sin row computed per token), the other at
    # consecutive ones (rows by rotation, about twice as fast), started together. Without the
    # call's lock the faster one, when it starts second, overtakes the slower mid-sweep and the
    # outputs end as a mix: its rotation before that point, the slower one's after it.
    q = rng.standard_normal((1, 8192, 1, 128)).astype(np.float32)
    call = posenc.RopeCall(q, base=10000.0, threads=1)
    scattered = rng.integers(0, 1 << 20, 8192).astype(np.int64)
    runs = {"scattered": {"positions": scattered}, "consecutive": {"offset": 5}}
    results = [bits(posenc.apply_rope(q, base=10000.0, **kw)[0]) for kw in runs.values()]
    for round_ in range(20):
        barrier = threading.Barrier(2)
        errors = []

        def run(kw):
            try:
                barrier.wait()
                call(**kw)
            except Exception as e:  # noqa: BLE001 - reported by the assert below
                errors.append(e)

        # The thread started second usually reaches the barrier last and calls first: both
        # orders, round by round.
        order = list(runs.values())[::1 if round_ % 2 else -1]
        threads = [threading.Thread(target=run, args=(kw,)) for kw in order]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        out = bits(call.out_q)
        assert any(np.array_equal(out, r) for r in results)


@pytest.mark.parametrize("name", ["llama-3.1-8b.json", "gpt-j-6b.json", "qwen2.5-7b-yarn.json"])
def test_config_frequencies_equal_apply_rope_with_the_config(rng, name):
    # The docstring's recipe for a config (llama3 scaling; GPT-J: interleaved, partial rotary;
    # YaRN: an attention factor), at lengths where these configs' frequencies do not change.
    config = posenc.load_hf_config(str(REPO / "tools" / "configs" / name))
    f = posenc.frequencies(config, 64)
    q = rng.standard_normal((1, 2, 3, config.head_dim)).astype(np.float32)
    call = posenc.RopeCall(q, inv_freq=f.inv_freq, attention_factor=f.attention_factor,
                           pairs=f.pairs, rotary_dim=f.rotary_dim)
    for offset in (0, 17, 61):
        want, _ = posenc.apply_rope(q, config=config, offset=offset)
        got, _ = call(offset=offset)
        assert np.array_equal(bits(got), bits(want))

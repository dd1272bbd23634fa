"""The double-precision oracle (posenc::reference): plain scalar loops in double, libm cos/sin of
the double angle, the same validation and messages as posenc.apply_rope. Slow; it is what the
kernels are tested against, and what a runtime can check its own RoPE with."""
from __future__ import annotations

from posenc import _args


def apply_rope(q, k=None, *, positions=None, offset=0, base=10000.0, inv_freq=None, config=None,
               layer_type=None, pairs=None, rotary_dim=None, inverse=False,
               attention_factor=1.0, cos=None, sin=None, out_q=None, out_k=None,
               arithmetic="f64", threads=0, layout="bshd", num_heads=None, num_kv_heads=None,
               table=None):
    """posenc.apply_rope evaluated in double and rounded once to q's dtype. `config` is not
    supported by the oracle (use posenc.frequencies and pass inv_freq / attention_factor);
    arithmetic and threads are accepted for symmetry and have no effect."""
    if config is not None:
        raise ValueError("config: posenc.reference.apply_rope takes inv_freq / attention_factor "
                         "(from posenc.frequencies), not a config")
    return _args.rope_call(q, k, positions, offset, base, inv_freq, None, layer_type, pairs,
                           rotary_dim, inverse, attention_factor, cos, sin, table, out_q, out_k,
                           arithmetic, threads, layout, num_heads, num_kv_heads, "reference")


def apply_rope_f64(q, k=None, *, positions=None, offset=0, base=10000.0, inv_freq=None,
                   pairs=None, rotary_dim=None, inverse=False, attention_factor=1.0, cos=None,
                   sin=None, layout="bshd", num_heads=None, num_kv_heads=None, table=None):
    """The unrounded float64 results (new arrays in q's / k's shape; pass-through channels
    included): the exact value that the contract's ulp bounds are measured from."""
    return _args.rope_call(q, k, positions, offset, base, inv_freq, None, None, pairs,
                           rotary_dim, inverse, attention_factor, cos, sin, table, None, None,
                           "f64", 0, layout, num_heads, num_kv_heads, "reference_f64")

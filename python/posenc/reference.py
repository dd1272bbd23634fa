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
    return _args.rope_call(
        q, k, positions=positions, offset=offset, base=base, inv_freq=inv_freq, config=None,
        layer_type=layer_type, pairs=pairs, rotary_dim=rotary_dim, inverse=inverse,
        attention_factor=attention_factor, cos=cos, sin=sin, table=table, out_q=out_q,
        out_k=out_k, arithmetic=arithmetic, threads=threads, layout=layout, num_heads=num_heads,
        num_kv_heads=num_kv_heads, mode="reference")


def apply_rope_f64(q, k=None, *, positions=None, offset=0, base=10000.0, inv_freq=None,
                   pairs=None, rotary_dim=None, inverse=False, attention_factor=1.0, cos=None,
                   sin=None, layout="bshd", num_heads=None, num_kv_heads=None, table=None):
    """The unrounded float64 results (new arrays in q's / k's shape; pass-through channels
    included): the exact value that the contract's ulp bounds are measured from."""
    return _args.rope_call(
        q, k, positions=positions, offset=offset, base=base, inv_freq=inv_freq, config=None,
        layer_type=None, pairs=pairs, rotary_dim=rotary_dim, inverse=inverse,
        attention_factor=attention_factor, cos=cos, sin=sin, table=table, out_q=None, out_k=None,
        arithmetic="f64", threads=0, layout=layout, num_heads=num_heads,
        num_kv_heads=num_kv_heads, mode="reference_f64")

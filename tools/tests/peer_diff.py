#!/usr/bin/env python3
"""Differential test: `numref cast --profile P` against the library that profile names.

spec §10.1 (profiles), §10.2 (pair rules), §11 (conversion); docs/profiles.md.

usage: peer_diff.py NUMREF LIB [--f32 N] [--only F,G] [--record F.npz | --replay F.npz]
  LIB: ml_dtypes (np.ndarray.astype), xla (jax.jit(lambda v: v.astype(t)) on CPU),
       torch (Tensor.to, the CPU kernels of this machine), torch_default (the same with
       ATEN_CPU_CAPABILITY=default)
  --f32 N: number of binary32 inputs (default 1 048 576; the `peers` tests 20 971 520): the
       structured set of numref_testlib.f32_structured() (37 892 codes: both signs x every
       exponent field x fractions 0, 1, all ones, every grid point and tie of the 8-, 6- and 4-bit
       targets and the first / last ties of bf16 and f16, each +- 1 ulp, so every target's max
       finite and just beyond; subnormals; +-0; +-Inf; NaN payloads of both signs, signaling and
       quiet) plus seeded random codes (splitmix64, seed 20240601) up to N.

--record F.npz writes the library's result of every pair (and the library's version, the date,
the f32 count and the inputs' sha256) to a new file; --replay F.npz compares numref with such a
recording without the library (the default-suite test cli_xla_recorded replays
tools/tests/fixtures/xla-jax-0.10.2.npz).

For every source format the library has and every target format it has (the same format
included), every code of each <= 16-bit source and the binary32 set are converted by both;
every result must be equal, NaN bits included. Prints one line per pair and the total; exits 1
on any difference (listing the first ones), 0 when there is none. A missing library is a
failure, never a skip: the message says how to install it (scripts/setup.sh, NUMREF_PEERS=1).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numref_testlib import code_inputs, numref_cast  # noqa: E402  (tools/tests/numref_testlib.py)

# ---- the libraries ------------------------------------------------------------------------

def lib_ml_dtypes():
    import numpy as np
    import ml_dtypes
    dt = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
          "f8e5m2": ml_dtypes.float8_e5m2, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu, "f6e3m2fn": ml_dtypes.float6_e3m2fn,
          "f6e2m3fn": ml_dtypes.float6_e2m3fn, "f4e2m1fn": ml_dtypes.float4_e2m1fn,
          "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
          "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e4m3": ml_dtypes.float8_e4m3,
          "f8e3m4": ml_dtypes.float8_e3m4}

    def cast(src, dst, codes):
        storage = {1: np.uint8, 2: np.uint16, 4: np.uint32}[np.dtype(dt[src]).itemsize]
        with np.errstate(all="ignore"):
            out = codes.astype(storage).view(dt[src]).astype(dt[dst])
        return out.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[out.dtype.itemsize]).astype(np.int64)
    return f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}", list(dt), cast


def lib_xla():
    import numpy as np
    import jax
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    # every format of numref that XLA's CPU backend converts (jaxlib 0.10 cannot compile a convert
    # to or from float6_e2m3fn / float6_e3m2fn on CPU: docs/profiles.md)
    dt = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16, "f8e4m3fn": jnp.float8_e4m3fn,
          "f8e5m2": jnp.float8_e5m2, "f8e8m0fnu": jnp.float8_e8m0fnu, "f4e2m1fn": jnp.float4_e2m1fn,
          "f8e4m3fnuz": jnp.float8_e4m3fnuz, "f8e5m2fnuz": jnp.float8_e5m2fnuz,
          "f8e4m3b11fnuz": jnp.float8_e4m3b11fnuz, "f8e4m3": jnp.float8_e4m3, "f8e3m4": jnp.float8_e3m4}
    _, mld_formats, mld_cast = lib_ml_dtypes()  # ml_dtypes builds the source arrays only (a view, no conversion)

    def cast(src, dst, codes):
        import ml_dtypes
        np_dt = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
                 "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
                 "f8e8m0fnu": ml_dtypes.float8_e8m0fnu, "f4e2m1fn": ml_dtypes.float4_e2m1fn,
                 "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
                 "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e4m3": ml_dtypes.float8_e4m3,
                 "f8e3m4": ml_dtypes.float8_e3m4}[src]
        storage = {1: np.uint8, 2: np.uint16, 4: np.uint32}[np.dtype(np_dt).itemsize]
        x = codes.astype(storage).view(np_dt)
        out = np.asarray(jax.jit(lambda v: v.astype(dt[dst]))(x))
        return out.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[out.dtype.itemsize]).astype(np.int64)
    return f"jax {jax.__version__}, jaxlib {jax.lib.__version__}", list(dt), cast


def lib_torch():
    import numpy as np
    import torch
    dt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f8e4m3fn": torch.float8_e4m3fn,
          "f8e5m2": torch.float8_e5m2, "f8e8m0fnu": torch.float8_e8m0fnu,
          "f8e4m3fnuz": torch.float8_e4m3fnuz, "f8e5m2fnuz": torch.float8_e5m2fnuz}
    signed = {1: (np.uint8, torch.uint8), 2: (np.int16, torch.int16), 4: (np.int32, torch.int32)}

    def cast(src, dst, codes):
        n = torch.empty(0, dtype=dt[src]).element_size()
        unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32}[n]
        x = torch.from_numpy(codes.astype(unsigned).view(signed[n][0]).copy()).view(dt[src])
        y = x.to(dt[dst])
        m = y.element_size()
        return y.view(signed[m][1]).numpy().astype(np.int64) & ((1 << (8 * m)) - 1)
    cap = torch.backends.cpu.get_cpu_capability()
    return f"torch {torch.__version__} (CPU capability {cap})", list(dt), cast


LIBS = {"ml_dtypes": lib_ml_dtypes, "xla": lib_xla, "torch": lib_torch, "torch_default": lib_torch}
INSTALL = {"ml_dtypes": "pip install ml_dtypes (scripts/setup.sh does)",
           "xla": "pip install jax (NUMREF_PEERS=1 scripts/setup.sh)",
           "torch": "pip install torch (NUMREF_PEERS=1 scripts/setup.sh)"}


def inputs_sha256(f32_codes):
    """The sha256 of the binary32 inputs: a replay must regenerate the very codes recorded."""
    import hashlib
    import numpy as np
    return hashlib.sha256(np.asarray(f32_codes, dtype=np.int64).tobytes()).hexdigest() if f32_codes is not None else ""


def replay(args):
    """numref against a recording of --record: every recorded pair, every result equal."""
    import numpy as np
    try:
        rec = np.load(args.replay, allow_pickle=False)
        lib, version, date, f32_count, sha = (str(x) for x in rec["meta"])
    except (OSError, KeyError, ValueError) as e:
        print(f"FAIL: --replay {args.replay}: {e}", file=sys.stderr)
        return 2
    if lib != args.lib:
        print(f"FAIL: --replay {args.replay} records {lib}, not {args.lib}", file=sys.stderr)
        return 2
    f32 = code_inputs("f32", int(f32_count))
    if inputs_sha256(f32) != sha:
        print(f"FAIL: --replay {args.replay}: this tree generates other f32 inputs than the recording "
              "(sha256 differs); record again with the library (NUMREF_PEERS=1)", file=sys.stderr)
        return 1
    print(f"replaying {lib} ({version}, recorded {date}); profile {lib}")
    total = differ = 0
    failures = []
    for key in sorted(k for k in rec.files if k != "meta"):
        src, dst = key.split(">")
        codes = f32 if src == "f32" else code_inputs(src, 0)
        want = rec[key].astype(np.int64)
        got = numref_cast(args.numref, src, dst, codes, ("--profile", lib))
        bad = np.nonzero(got != want)[0]
        total += len(codes)
        differ += len(bad)
        for i in bad[:5]:
            failures.append(f"{src}->{dst} input {int(codes[i]):x}: numref {int(got[i]):x}, {lib} {int(want[i]):x}")
    print(f"{lib} (recorded): {total} conversions in {len(rec.files) - 1} pairs, {differ} differ")
    if total == 0:
        print("FAIL: the recording holds no pair", file=sys.stderr)
        return 1
    if differ:
        print("FAIL:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print(f"OK: numref --profile {lib} equals the recorded {lib} on every input, NaN bits included")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("numref")
    ap.add_argument("lib", choices=sorted(LIBS))
    ap.add_argument("--f32", type=int, default=1 << 20)
    ap.add_argument("--only", default="",
                    help="comma-separated formats: only the pairs with one of them as source or target")
    ap.add_argument("--record", default="", help="also write the library's results to this .npz (a new file)")
    ap.add_argument("--replay", default="", help="compare with the results recorded in this .npz (no library)")
    args = ap.parse_args()
    if args.record and args.replay:
        print("FAIL: --record and --replay exclude each other", file=sys.stderr)
        return 2
    if args.record and os.path.exists(args.record):
        print(f"FAIL: --record {args.record} exists: a recording is written to a new file", file=sys.stderr)
        return 2
    if args.replay:
        return replay(args)
    if args.lib == "torch_default" and os.environ.get("ATEN_CPU_CAPABILITY") != "default":
        os.environ["ATEN_CPU_CAPABILITY"] = "default"  # read when torch is imported
    try:
        import numpy as np
        version, formats, cast = LIBS[args.lib]()
    except ImportError as e:  # a missing dependency is a failure, never a skip
        print(f"FAIL: the {args.lib} differential test needs its library ({e}); "
              f"{INSTALL.get(args.lib, INSTALL['torch'])}", file=sys.stderr)
        return 1
    print(f"{args.lib}: {version}; profile {args.lib}")
    inputs = {f: code_inputs(f, args.f32) for f in formats}
    recorded = {}
    total = differ = 0
    failures = []
    only = set(filter(None, args.only.split(",")))
    for src in formats:
        for dst in formats:
            if only and src not in only and dst not in only:
                continue
            codes = inputs[src]
            try:
                want = cast(src, dst, codes)
            except TypeError as e:  # the library has no such cast (ml_dtypes: f8e4m3fn -> f8e8m0fnu)
                print(f"  {src:>9} -> {dst:<9} not offered by {args.lib} ({str(e).splitlines()[0]})")
                continue
            if args.record:
                recorded[f"{src}>{dst}"] = want.astype(np.uint32)
            got = numref_cast(args.numref, src, dst, codes, ("--profile", args.lib))
            bad = np.nonzero(got != want)[0]
            total += len(codes)
            differ += len(bad)
            print(f"  {src:>13} -> {dst:<13} {len(codes):>9} inputs, {len(bad)} differ")
            for i in bad[:5]:
                failures.append(f"{src}->{dst} input {int(codes[i]):x}: numref {int(got[i]):x}, {args.lib} {int(want[i]):x}")
    print(f"{args.lib}: {total} conversions, {differ} differ")
    if args.record:
        import datetime
        meta = np.array([args.lib, version, datetime.date.today().isoformat(), str(args.f32),
                         inputs_sha256(inputs.get("f32"))])
        with open(args.record, "xb") as f:
            np.savez_compressed(f, meta=meta, **recorded)
        print(f"recorded {len(recorded)} pairs to {args.record}")
    if total == 0:  # a run that compared nothing is not a pass
        print(f"FAIL: no conversion compared (--only {args.only!r} names no format of {args.lib})", file=sys.stderr)
        return 1
    if differ:
        print("FAIL:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print(f"OK: numref --profile {args.lib} equals {args.lib} on every input, NaN bits included")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Decoding's state cache (--set cache=, cache_rows=, cache_round=; docs/forms.md "The state cache")
against numpy and torch written from the serving engines' definitions, not from lib/:

1. The rounding of one value (vla_cache_value) against numpy's float16 and torch's bfloat16
   casts, the OCP fp8 formats e4m3 and e5m2 rounded here on their grids (numpy's rint: this torch
   has no float8 dtypes), numpy's rint for the integers (vLLM PR 40012's scale -> round -> clamp
   -> cast), the scale amax / largest in binary32: bit for bit.
2. Stochastic rounding: the rule floor(frac 2^32) + w >= 2^32 written here, bit for bit, and its
   mean over 4096 words within 5 standard errors of the value (unbiased).
3. gdn's decode step with the cache, teacher-forced: from vlastab's cached S_{t-1}, the update
   S_t = a S (I - beta k k^T) + beta v k^T (Gated DeltaNet, Yang et al. 2024, with fla's l2norm
   of q and k) in binary64 here, then the cache; vlastab's S_t agrees entry for entry except
   where the two updates (binary32 there, binary64 here: relative 1e-6 apart) straddle a rounding
   boundary, at most one quantum; and the read-out comes from the update before the cache.
4. Error feedback: for la, S_t = S_{t-1} + v k^T is a sum, so with ef the cached S_T plus its
   residual is the binary32 sum, and S_T is within half a quantum per entry of it: relative error
   at most sqrt(d) / 254 (a scale amax / 127 per row, |r| <= scale / 2) plus the binary32 sum's
   own, while round to nearest accumulates its roundings.
5. Saturation: the flag of vla_cache_value_sat is 1 exactly where the unclamped cast of x went
   past the format's largest (fp8, the integers), under sr where x passed the largest's next
   number, and a run's counts carry the clamped entries (cache_sat): la's S = sum v k^T past 448
   in e4m3 without a scale clamps, with a scale per row it does not.
"""
import ctypes

import numpy as np
import torch

import vlastab
from vlastab import _abi

L = vlastab.library
L.vla_cache_value.restype = ctypes.c_float
L.vla_cache_value.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_float, ctypes.c_float,
                              ctypes.c_uint32]
L.vla_cache_value_sat.restype = ctypes.c_float
L.vla_cache_value_sat.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_float, ctypes.c_float,
                                  ctypes.c_uint32, ctypes.POINTER(ctypes.c_int)]
L.vla_cache_scale.restype = ctypes.c_float
L.vla_cache_scale.argtypes = [ctypes.c_int, ctypes.c_double]
L.vla_cache_word.restype = ctypes.c_uint32
L.vla_cache_word.argtypes = [ctypes.c_uint64, ctypes.c_long, ctypes.c_long]

FMTS = {"f16": _abi.VLA_CACHE_F16, "bf16": _abi.VLA_CACHE_BF16, "e4m3": _abi.VLA_CACHE_E4M3,
        "e5m2": _abi.VLA_CACHE_E5M2, "int8": _abi.VLA_CACHE_INT8, "int16": _abi.VLA_CACHE_INT16}
LARGEST = {"f16": 65504.0, "bf16": float(torch.finfo(torch.bfloat16).max), "e4m3": 448.0,
           "e5m2": 57344.0, "int8": 127.0, "int16": 32767.0}
GRID = {"f16": (11, -14), "bf16": (8, -126), "e4m3": (4, -6), "e5m2": (3, -14)}
RN, SR = _abi.VLA_CROUND_RN, _abi.VLA_CROUND_SR


def scale_of(fmt, amax):
    return np.float32(np.float64(amax) / LARGEST[fmt])  # one rounding of a binary32 quotient


def cast(fmt, x):
    """x (float32 array) rounded to nearest into fmt, as the engines cast (saturating for fp8 and
    the integers, as vLLM clamps before the cast)"""
    m = LARGEST[fmt]
    if fmt == "f16":
        return x.astype(np.float16).astype(np.float64)
    if fmt == "bf16":
        return torch.from_numpy(x).to(torch.bfloat16).double().numpy()
    if fmt in ("e4m3", "e5m2"):  # OCP fp8 (this torch has no float8 dtypes): p bits, subnormals
        p, emin = GRID[fmt]         # below 2^emin, ties to even (np.rint), saturated
        x = x.astype(np.float64)
        q = 2.0**(np.maximum(np.frexp(x)[1] - 1, emin) - (p - 1))
        return np.clip(np.rint(x / q) * q, -m, m)
    return np.clip(np.rint(x.astype(np.float64)), -m, m)


def quantize(fmt, y, rows, words=None):
    """y (dv x d float32): each group of `rows` rows scaled by its amax, rounded, decoded"""
    out = np.empty_like(y)
    g = rows or y.shape[0]
    for a in range(0, y.shape[0], g):
        blk = y[a:a + g]
        s = scale_of(fmt, np.abs(blk).max()) if rows else np.float32(1)
        x = (blk / s).astype(np.float32) if s else blk * 0
        if words is None:
            q = cast(fmt, x)
        else:
            q = sr(fmt, x, words[a * y.shape[1]:(a + blk.shape[0]) * y.shape[1]].reshape(blk.shape))
        out[a:a + g] = (q * np.float64(s)).astype(np.float32)
    return out


def sr(fmt, x, w):
    """stochastic rounding of x by the words w: up when floor(frac 2^32) + w >= 2^32, frac the part
    below the grid (the integers: of x itself; the floating formats: of |x| on its binade's grid)"""
    x = x.astype(np.float64)
    if fmt.startswith("int"):
        n = np.floor(x)
        up = np.floor((x - n) * 2.0**32) + w >= 2.0**32
        return np.clip(n + up, -LARGEST[fmt], LARGEST[fmt])
    p, emin = GRID[fmt]
    a = np.abs(x)
    e = np.maximum(np.frexp(a)[1] - 1, emin)  # a in [2^e, 2^(e+1)), or below the normals
    q = 2.0**(e - (p - 1))
    n = np.floor(a / q)
    up = np.floor((a / q - n) * 2.0**32) + w >= 2.0**32
    y = np.copysign((n + up) * q, x)
    m = LARGEST[fmt]
    return np.clip(y, -m, m) if fmt in ("e4m3", "e5m2") else np.where(np.abs(y) > m, np.copysign(np.inf, y), y)


def lib_values(fmt, rnd, y, s, words=None):
    w = words if words is not None else np.zeros(y.size, dtype=np.uint32)
    return np.array([L.vla_cache_value(FMTS[fmt], rnd, float(v), float(s), int(wi))
                     for v, wi in zip(y.ravel(), w.ravel())], dtype=np.float32).reshape(y.shape)


def test_one_value_against_the_casts():
    rng = np.random.default_rng(1)
    # magnitudes over 12 binades, so that fp8's subnormals and the integers' small values occur
    y = (rng.standard_normal(4000) * 2.0**rng.integers(-10, 3, 4000)).astype(np.float32)
    y[:4] = [0, -0.0, 1e-30, -3]
    for fmt in FMTS:
        for scaled in (True, False):
            if fmt.startswith("int") and not scaled:
                continue
            s = scale_of(fmt, np.abs(y).max()) if scaled else np.float32(1)
            assert L.vla_cache_scale(FMTS[fmt], float(np.abs(y).max())) == s or not scaled
            want = (cast(fmt, (y / s).astype(np.float32)) * np.float64(s)).astype(np.float32)
            got = lib_values(fmt, RN, y, s)
            bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
            assert bad.size == 0, "%s scaled=%s: %d of %d differ, first y=%r lib %r want %r" % (
                fmt, scaled, bad.size, y.size, y[bad[0]], got[bad[0]], want[bad[0]])


def test_stochastic_rounding_rule_and_mean():
    rng = np.random.default_rng(2)
    y = (rng.standard_normal(300) * 2.0**rng.integers(-8, 2, 300)).astype(np.float32)
    words = rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32)
    for fmt in FMTS:
        s = scale_of(fmt, np.abs(y).max())
        want = (sr(fmt, (y / s).astype(np.float32), words.astype(np.float64)) * np.float64(s)
                ).astype(np.float32)
        got = lib_values(fmt, SR, y, s, words)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, "%s: %d differ, first y=%r lib %r want %r" % (
            fmt, bad.size, y[bad[0]], got[bad[0]], want[bad[0]])
    # unbiased: a value between two int8 steps, 4096 words from vla_cache_word
    ws = np.array([L.vla_cache_word(7, 3, i) for i in range(4096)], dtype=np.uint32)
    for fmt, v in (("int8", 0.3), ("e4m3", 0.3), ("int16", 0.7)):
        s = scale_of(fmt, 1.0)
        dec = lib_values(fmt, SR, np.full(4096, v, dtype=np.float32), s, ws).astype(np.float64)
        lo, hi = dec.min(), dec.max()
        assert lo < v < hi and np.unique(dec).size == 2, (fmt, lo, hi)
        se = (hi - lo) / 2 / np.sqrt(4096)  # the largest standard error of a two-point mean
        assert abs(dec.mean() - np.float32(v)) < 5 * se, (fmt, dec.mean(), v, se)


def gdn_inputs(T, d, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, T, d)).astype(np.float32)
    k = rng.standard_normal((1, T, d)).astype(np.float32)
    v = rng.standard_normal((1, T, d)).astype(np.float32)
    lg = (-np.exp(rng.standard_normal((1, T)) - 3)).astype(np.float32)
    beta = rng.uniform(0.2, 0.9, (1, T)).astype(np.float32)
    return q, k, v, lg, beta


def gdn_step(S, q, k, v, lg, beta, d):
    """one token of Gated DeltaNet in binary64: q and k l2-normalized (fla's default, eps 1e-6),
    S_t = a S (I - beta k k^T) + beta v k^T, o = S_t (q / sqrt(d))"""
    q = q.astype(np.float64) / np.sqrt(np.sum(q.astype(np.float64) ** 2) + 1e-6)
    k = k.astype(np.float64) / np.sqrt(np.sum(k.astype(np.float64) ** 2) + 1e-6)
    S = np.exp(np.float64(lg)) * S.astype(np.float64)
    S = S + np.float64(beta) * np.outer(v.astype(np.float64) - S @ k, k)
    return S, S @ (q / np.sqrt(d))


def test_gdn_decode_with_the_cache_teacher_forced():
    T, d = 10, 16
    q, k, v, lg, beta = gdn_inputs(T, d, 3)
    for fmt, rows, rnd in (("int8", 1, "rn"), ("e4m3", 1, "rn"), ("int16", 4, "sr"),
                           ("f16", 0, "rn")):
        quanta = 0
        changed = 0
        for t in range(1, T + 1):
            run = lambda n: vlastab.run(q[:, :n], k[:, :n], v[:, :n], model="gdn", precision="f32",
                                        logdecay=lg[:, :n], beta=beta[:, :n], reference=False,
                                        cache=fmt, cache_rows=rows, cache_round=rnd)
            prev = run(t - 1)["S"][0] if t > 1 else np.zeros((d, d), np.float32)
            now = run(t)
            S64, o64 = gdn_step(prev, q[0, t - 1], k[0, t - 1], v[0, t - 1], lg[0, t - 1],
                                beta[0, t - 1], d)
            o = now["o"][0, t - 1]
            assert np.max(np.abs(o - o64)) <= 1e-5 * np.max(np.abs(o64)), (fmt, t, o, o64)
            y = S64.astype(np.float32)
            words = (np.array([L.vla_cache_word(1, t, i) for i in range(d * d)], dtype=np.float64)
                     if rnd == "sr" else None)
            want = quantize(fmt, y, rows, words)
            got = now["S"][0]
            # the two updates' scales may differ in their last bit (amax of values 1e-7 apart):
            # agreement is within 4 binary32 ulps; elsewhere the updates straddled a boundary, one
            # quantum of that row's scale at most
            diff = np.abs(got - want) > 2.0**-21 * np.abs(want)
            g = rows or d
            for i in np.flatnonzero(diff.any(axis=1)):
                blk = y[i // g * g:(i // g + 1) * g]
                s = scale_of(fmt, np.abs(blk).max()) if rows else np.float32(1)
                step = s if fmt.startswith("int") else np.abs(want[i]) * 2.0**-(GRID[fmt][0] - 1)
                assert np.all(np.abs(got[i] - want[i]) <= 1.01 * step + 1e-30), (fmt, t, i)
            quanta += diff.sum()
            changed += np.sum(got != y)
        assert quanta <= 0.01 * T * d * d, "%s: %d of %d entries off by a quantum" % (
            fmt, quanta, T * d * d)
        assert changed >= 0.5 * T * d * d, "%s: the cache changed %d of %d entries" % (
            fmt, changed, T * d * d)


def test_error_feedback_keeps_the_sum():
    T, d = 400, 16
    rng = np.random.default_rng(4)
    q = rng.standard_normal((1, T, d)).astype(np.float32)
    k = rng.standard_normal((1, T, d)).astype(np.float32)
    v = rng.standard_normal((1, T, d)).astype(np.float32)
    err = {}
    for rnd in ("rn", "ef"):
        r = vlastab.run(q, k, v, model="la", precision="f32", cache="int8", cache_rows=1,
                        cache_round=rnd)
        err[rnd] = float(r["s_relerr"][0])
    bound = np.sqrt(d) / 254 + 4 * T * 2.0**-24
    assert err["ef"] <= bound, (err, bound)
    assert err["rn"] > 3 * err["ef"], err


def test_saturation_flagged_and_counted():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(3000) * 2.0**rng.integers(-2, 18, 3000)).astype(np.float32)
    for fmt in ("e4m3", "e5m2", "int8", "int16"):
        m = LARGEST[fmt]
        if fmt.startswith("int"):
            unclamped = np.rint(x.astype(np.float64))
        else:  # the grid of cast() without its clip
            p, emin = GRID[fmt]
            q = 2.0**(np.maximum(np.frexp(x.astype(np.float64))[1] - 1, emin) - (p - 1))
            unclamped = np.rint(x / q) * q
        flag = ctypes.c_int(-1)
        got = []
        for v in x:
            L.vla_cache_value_sat(FMTS[fmt], RN, float(v), 1.0, 0, ctypes.byref(flag))
            got.append(flag.value)
        want = np.abs(unclamped) > m
        assert np.array_equal(np.array(got, dtype=bool), want), fmt
        assert 0 < want.sum() < x.size, (fmt, want.sum())
    # sr: x within a spacing above the largest, rounded up and clamped back, is no saturation;
    # past the largest's next number it is
    top = ctypes.c_int(-1)
    for fmt, x, want in (("int8", 127 + 2.0**-17, 0), ("int8", -128.25, 1), ("e4m3", 470, 0),
                         ("e4m3", 481, 1)):
        v = L.vla_cache_value_sat(FMTS[fmt], SR, x, 1.0, 2**32 - 1, ctypes.byref(top))
        assert abs(v) == LARGEST[fmt] and top.value == want, (fmt, x, v, top.value)
    T, d = 50, 8
    q = rng.standard_normal((1, T, d)).astype(np.float32)
    k = rng.standard_normal((1, T, d)).astype(np.float32)
    v = (1000 * rng.standard_normal((1, T, d))).astype(np.float32)
    sat = {}
    for rows in (0, 1):
        r = vlastab.run(q, k, v, model="la", precision="f32", cache="e4m3", cache_rows=rows,
                        normalize="off", reference=False)
        sat[rows] = r["counts"][0]["cache_sat"]
    assert sat[0] > 0 and sat[1] == 0, sat

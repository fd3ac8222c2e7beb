"""NaN-bit probe: what torch 2.11 writes for NaN results on CPU and CUDA.

For each device: fp8/e8m0/fp16/bf16 NaN codes converted to float32; float32
NaN operands of several payloads through mul/add/div/neg/abs/where/casts;
invalid operations (0*inf, inf-inf, 0/0) in float32 and float16; and the
sign of a sum of negative zeros. Writes JSON of hex bit patterns."""
import json
import sys

import torch

NANS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FF00000, 0xFFE00000, 0x7FC12345, 0x7FA00000]


def hx32(t):
    return ["%08x" % (v & 0xFFFFFFFF) for v in t.detach().cpu().contiguous().view(torch.int32).tolist()]


def hx16(t):
    return ["%04x" % (v & 0xFFFF) for v in t.detach().cpu().contiguous().view(torch.int16).tolist()]


def f32(bits, dev):
    return torch.tensor([b - (1 << 32) if b >= 1 << 31 else b for b in bits], dtype=torch.int32).view(torch.float32).to(dev)


def probe(dev):
    r = {}
    codes = torch.arange(256, dtype=torch.uint8)
    for name, dt in [("e4m3fn", torch.float8_e4m3fn), ("e5m2", torch.float8_e5m2), ("e8m0fnu", torch.float8_e8m0fnu)]:
        x = codes.to(dev).view(dt).to(torch.float32)
        nan = torch.isnan(x).cpu()
        r["decode." + name] = {"%02x" % i: h for i, h in enumerate(hx32(x)) if nan[i]}
        for odt, on in [(torch.float16, "f16"), (torch.bfloat16, "bf16")]:
            try:
                y = codes.to(dev).view(dt).to(odt)
                n2 = torch.isnan(y.float()).cpu()
                r["decode.%s.to_%s" % (name, on)] = {"%02x" % i: h for i, h in enumerate(hx16(y)) if n2[i]}
            except Exception as e:  # noqa: BLE001
                r["decode.%s.to_%s" % (name, on)] = "error: %s" % e
    h16 = torch.tensor([v - 65536 if v >= 32768 else v for v in [0x7E00, 0xFE00, 0x7C01, 0x7D00, 0x7FFF, 0xFFFF]], dtype=torch.int16)
    r["f16_to_f32"] = dict(zip(hx16(h16), hx32(h16.to(dev).view(torch.float16).to(torch.float32))))
    r["bf16_to_f32"] = dict(zip(hx16(h16), hx32(h16.to(dev).view(torch.bfloat16).to(torch.float32))))
    a = f32(NANS, dev)
    two = torch.full_like(a, 2.0)
    other = f32([0x7FC00001] * len(NANS), dev)
    ops = {
        "a*2t": a * two, "2t*a": two * a, "a*2.0": a * 2.0, "2.0*a": 2.0 * a, "a+1t": a + torch.ones_like(a),
        "a/3t": a / torch.full_like(a, 3.0), "a/3.0": a / 3.0, "3t/a": torch.full_like(a, 3.0) / a,
        "-a": -a, "abs(a)": a.abs(), "a*nan7fc00001": a * other, "nan7fc00001*a": other * a,
        "where(a)": torch.where(torch.ones_like(a, dtype=torch.bool), a, two), "a.clone": a.clone(),
        "a.to(f16).to(f32)": a.to(torch.float16).to(torch.float32), "a.to(bf16).to(f32)": a.to(torch.bfloat16).to(torch.float32),
        "a.to(f64).to(f32)": a.to(torch.float64).to(torch.float32), "a*1t": a * torch.ones_like(a),
    }
    r["binary"] = {k: dict(zip(["%08x" % b for b in NANS], hx32(v))) for k, v in ops.items()}
    z = torch.zeros(4, device=dev)
    inf = torch.full((4,), float("inf"), device=dev)
    ninf = -inf
    inv = {"0*inf": z * inf, "inf*0": inf * z, "-0*inf": (-z) * inf, "inf-inf": inf - inf, "inf+ninf": inf + ninf,
           "0/0": z / z, "inf/inf": inf / inf, "sqrt(-1)": torch.sqrt(-torch.ones(4, device=dev)),
           "0*inf scalar": z * float("inf")}
    r["invalid_f32"] = {k: hx32(v)[0] for k, v in inv.items()}
    zh, infh = z.half(), inf.half()
    r["invalid_f16"] = {"0*inf": hx16(zh * infh)[0], "inf-inf": hx16(infh - infh)[0], "0/0": hx16(zh / zh)[0]}
    nz = torch.full((1000,), -0.0, device=dev)
    r["sum_negzero"] = {"sum(-0 x1000)": hx32(nz.sum().reshape(1))[0], "sum(-0 x1)": hx32(nz[:1].sum().reshape(1))[0],
                        "matmul(-0)": hx32((nz.reshape(1, -1) @ torch.ones(1000, 1, device=dev)).reshape(1))[0]}
    return r


out = {"torch": torch.__version__, "cuda": torch.version.cuda}
devs = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
for d in devs:
    try:
        out[d] = probe(d)
    except Exception as e:  # noqa: BLE001
        import traceback
        out[d] = "error: " + traceback.format_exc()
if torch.cuda.is_available():
    out["device_name"] = torch.cuda.get_device_name()
json.dump(out, open(sys.argv[1], "w"), indent=1, sort_keys=True)
print("probe written", file=sys.stderr)

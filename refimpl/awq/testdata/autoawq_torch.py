# Generates the autoawq_*.bin fixtures of torch_test.go: python3 autoawq_torch.py OUTDIR
# (torch 2.11.0+cu130, H100, 2026-11-22). The fixtures keep the first 16 rows
# (OC) of each output: w.bin[:16*512*2], scales_*[:16*4*2], zeros_*[:16*4*4],
# q_*[:16*512*4], intw_* -> autoawq_intweight_* [:16*512*4].
# AutoAWQ zero-point quantizer, op for op as awq/quantize/quantizer.py
# pseudo_quantize_tensor and awq/modules/linear/gemm.py from_linear compute it.
import sys, torch
out = sys.argv[1]
torch.manual_seed(0)
OC, IC, G = 256, 512, 128
w = (torch.randn(OC, IC) * 0.05).half()
w[0, :G] = 1.0
w[1, :G] = (torch.randn(G) * 1e-6).half()
w[2, :G] = (torch.rand(G) * 60000 - 30000).half()
w[3, :G] = (torch.rand(G) * 0.5 + 0.5).half()
w[4, :G] = -(torch.rand(G) * 0.5 + 0.5).half()
w[5, :G] = (torch.randint(-16, 16, (G,)) * 0.5).half()
w[6, :G] = (torch.randint(-16, 16, (G,)) * 0.0625).half()
w[7, :G] = (torch.randn(G) * 1e-3).half() * torch.randint(0, 2, (G,)).half()
for dev in ["cuda", "cpu"]:
    x = w.to(dev).reshape(-1, G)
    mx = x.amax(dim=1, keepdim=True)
    mn = x.amin(dim=1, keepdim=True)
    scales = (mx - mn).clamp(min=1e-5) / 15
    zeros = (-torch.round(mn / scales)).clamp_(0, 15)
    q = torch.clamp(torch.round(x / scales) + zeros, 0, 15)
    wq = ((q - zeros) * scales).reshape(OC, IC)
    scales = scales.view(OC, -1)
    zeros = zeros.view(OC, -1)
    # from_linear: round((w_dq + z*s) / s) per input channel
    sz = (zeros * scales).repeat_interleave(G, dim=1)
    sr = scales.repeat_interleave(G, dim=1)
    intw = torch.round((wq + sz) / sr).to(torch.int32)
    assert scales.dtype == torch.float16 and wq.dtype == torch.float16
    w.view(torch.int16).numpy().tofile(f"{out}/w.bin")
    scales.cpu().view(torch.int16).numpy().tofile(f"{out}/scales_{dev}.bin")
    zeros.cpu().to(torch.int32).numpy().tofile(f"{out}/zeros_{dev}.bin")
    q.cpu().reshape(OC, IC).to(torch.int32).numpy().tofile(f"{out}/q_{dev}.bin")
    intw.cpu().numpy().tofile(f"{out}/intw_{dev}.bin")
print("autoawq done", torch.__version__)

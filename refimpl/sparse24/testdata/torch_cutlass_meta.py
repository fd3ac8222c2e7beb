# Generates torch_dense_{f16,i8}.bin and torch_meta_{f16,i8}.bin (files
# dense_*.bin and meta_*.bin in OUTDIR): python3 torch_cutlass_meta.py OUTDIR
# (torch 2.11.0+cu130, H100, 2026-11-22).
# PyTorch's CUTLASS metadata converter on dense matrices whose groups of 4 hold
# 0, 1 or 2 nonzeros (every pattern), fp16 (int16 meta) and int8 (int32 meta).
import sys, torch
from torch.sparse import _semi_structured_conversions as c
out = sys.argv[1]
f = getattr(c, "sparse_semi_structured_from_dense_cutlass", None) or getattr(c, "sparse_semi_structured_from_dense")
g = torch.Generator().manual_seed(1)
masks = [m for m in range(16) if bin(m).count("1") <= 2]
for dt, name in [(torch.float16, "f16"), (torch.int8, "i8")]:
    m, k = 64, 128
    sel = torch.randint(0, len(masks), (m, k // 4), generator=g)
    dense = torch.zeros(m, k // 4, 4, dtype=torch.int32)
    for i in range(m):
        for t in range(k // 4):
            mk = masks[sel[i, t]]
            for j in range(4):
                if mk >> j & 1:
                    dense[i, t, j] = int(torch.randint(1, 7, (1,), generator=g))
    dense = dense.view(m, k)
    dense.to(torch.int8).numpy().tofile(f"{out}/dense_{name}.bin")
    sparse, meta = f(dense.to(dt).cuda())
    print(name, sparse.shape, meta.shape, meta.dtype)
    meta.cpu().numpy().tofile(f"{out}/meta_{name}.bin")
print("sp24 done")

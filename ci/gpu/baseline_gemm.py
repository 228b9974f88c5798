"""Baselines of ktune's GEMM benchmark, measured in the same run: PyTorch's matmul routed to
cuBLASLt (torch.backends.cuda.preferred_blas_library("cublaslt")), which picks its algorithm by
its own heuristic, and PyTorch's default cuBLAS route; fp8 e4m3 through torch._scaled_mm
(cuBLASLt) with per-tensor scales and an fp8 output (bf16 when fp8 output is refused). Timed as
ktune times a compute-bound kernel: CUDA events around one call, median of many samples, no L2
flush. The product is ktune's b_layout=0 case: D[m,n] = A[m,k] @ B[n,k]^T.

Usage: python3 -m ci.gpu.baseline_gemm --shapes m,n,k [m,n,k ...] --precisions bf16 fp16 tf32 fp8_e4m3
Prints one JSON object: {"device", "torch", "results": [{"m","n","k","precision","library",
"median_ns","tflops"}]} with library "cublaslt" or "cublas"; a case that fails has "error".
"""
import torch

from .baseline_cli import parse_args, print_results
from .baseline_families import timed  # same events and median as the family baselines

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}


def product(m, n, k, precision):
    """A callable computing the product, and a note on how."""
    if precision == "fp8_e4m3":
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device="cuda")
        try:
            torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, scale_result=one, out_dtype=torch.float8_e4m3fn)
            return (lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, scale_result=one,
                                             out_dtype=torch.float8_e4m3fn)), "fp8 output"
        except Exception:
            return (lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)), "bf16 output"
    a = torch.randn(m, k, device="cuda", dtype=DTYPES[precision])
    b = torch.randn(n, k, device="cuda", dtype=DTYPES[precision])
    return (lambda: torch.matmul(a, b.t())), ""


def main():
    shapes, precisions = parse_args()
    results = []
    for m, n, k in shapes:
        for precision in precisions:
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
            libraries = ["cublaslt"] if precision == "fp8_e4m3" else ["cublaslt", "cublas"]
            for library in libraries:
                entry = {"m": m, "n": n, "k": k, "precision": precision, "library": library}
                try:
                    torch.backends.cuda.preferred_blas_library(library)
                    fn, note = product(m, n, k, precision)
                    ns = timed(fn, flush_l2=False)
                    entry.update(median_ns=ns, tflops=2.0 * m * n * k / ns / 1e3, note=note)
                except Exception as e:  # a case that fails still leaves the others
                    entry["error"] = f"{type(e).__name__}: {e}"[:300]
                results.append(entry)
                torch.cuda.empty_cache()
    print_results(results)


if __name__ == "__main__":
    main()

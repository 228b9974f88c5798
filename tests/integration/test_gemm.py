"""The gemm family end to end without a GPU: CPU tunes verified against the float64 reference on
odd shapes (both layouts of B, every epilogue, five precisions), the CUDA wgmma variants'
validity rules, and clear errors for bad shapes."""
import harness

ODD_SHAPES = ["m=1,n=1,k=1", "m=37,n=101,k=95", "m=130,n=67,k=300,b_layout=1",
              "m=65,n=33,k=17,epilogue=1", "m=64,n=200,k=72,epilogue=2",
              "m=19,n=40,k=129,b_layout=1,epilogue=3", "m=50,n=9,k=64,epilogue=4"]


class Gemm(harness.KtuneTestCase):
    def test_cpu_tunes_verify_on_odd_shapes(self):
        for shape in ODD_SHAPES:
            for precision in ("fp32", "tf32", "fp16", "bf16", "fp8_e4m3"):
                with self.subTest(shape=shape, precision=precision):
                    result = self.tune_json("-k", "gemm", "-b", "cpu", "--shape", shape, "--precision",
                                             precision, "--strategy", "random", "--budget", "6", "--no-export",
                                             "--max-seconds-per-config", "0.01")
                    self.assertEqual(result["outcomes"], {"ok": 6})
                    self.assertLess(result["best"]["error"], {"fp32": 5e-5, "tf32": 5e-4, "fp16": 1e-3, "bf16": 1e-2,
                                                              "fp8_e4m3": 0.07}[precision])
                    self.assertGreater(result["best"]["flops_per_second"], 0)

    def test_tensor_core_paths_only_where_they_apply(self):
        def valid(shape, precision, arch="sm_90a"):
            return self.ktune_json("space", "-k", "gemm", "-b", "cuda", "--arch", arch, "--shape", shape,
                                   "--precision", precision)["valid"]
        square = "m=4096,n=4096,k=4096"
        simt_only = valid(square, "fp32")
        # k = 4095: rows of A are not 16-byte aligned, so neither cp.async (mma) nor TMA (wgmma).
        self.assertEqual(valid("m=4096,n=4096,k=4095", "bf16"), simt_only)
        with_mma = valid(square + ",b_layout=1", "bf16")  # B as [k,n]: mma (ldmatrix.trans), no wgmma
        self.assertGreater(with_mma, simt_only)
        self.assertGreater(valid(square, "bf16"), with_mma)  # B as [n,k]: wgmma too
        self.assertGreater(valid(square, "tf32"), simt_only)  # wgmma tf32, no mma
        sm80 = valid(square, "bf16", "sm_80")  # mma but no wgmma before sm_90a
        self.assertGreater(sm80, valid(square, "fp32", "sm_80"))
        self.assertLess(sm80, valid(square, "bf16"))

    def test_bad_shapes_are_bad_input(self):
        for shape, named in (("b_layout=2", "b_layout"), ("epilogue=7", "epilogue"), ("m=0", "m=0"),
                             ("rows=5", "rows"), ("m=2097152,k=2097152", "too large")):
            with self.subTest(shape=shape):
                result = self.ktune("tune", "-k", "gemm", "-b", "cpu", "--shape", shape, "--budget", "1", check=2)
                self.assertIn(named, result.stderr)


if __name__ == "__main__":
    harness.main()

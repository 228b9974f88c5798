// Synthetic `ktune report` data (schema 1) for developing and testing the report page without
// the C++ side: two groups, one with bench history (a 15% regression at commit c2d3e4f), a latest
// bench run and a tuning run; one CPU group with tuning data only. A benchmark name holds
// "<b>&" to prove the page escapes it. After the assignment the text is plain JSON.
window.KTUNE_REPORT = {
  "schema": 1,
  "generated_at": "2026-11-21T12:00:00Z",
  "ktune_version": "0.4.0",
  "git_commit": "6e3e21d",
  "database": "/home/ci/ktune/ktune.db",
  "groups": [
    {
      "id": "rmsnorm-cuda-1",
      "family": "rmsnorm",
      "backend": "cuda",
      "device": "NVIDIA H200",
      "device_fingerprint": "cuda:NVIDIA H200:sm_90:132sm:driver=565.57.01",
      "history": [
        {
          "benchmark": "rmsnorm/cuda/rows=4096,cols=4096/bf16",
          "problem": "rows=4096,cols=4096;bf16",
          "points": [
            {"bench_run_id": 1, "commit": "1a2b3c4", "time": "2026-11-10T09:00:00Z", "median_ns": 19794.4, "min_ns": 19705.5, "max_ns": 19932.6, "repetitions_ns": [19705.5, 19772.3, 19794.4, 19868.2, 19932.6]},
            {"bench_run_id": 2, "commit": "5d6e7f8", "time": "2026-11-11T10:07:00Z", "median_ns": 19876.4, "min_ns": 19809.1, "max_ns": 19940.3, "repetitions_ns": [19809.1, 19847.5, 19876.4, 19902.0, 19940.3]},
            {"bench_run_id": 3, "commit": "9a0b1c2", "time": "2026-11-12T11:14:00Z", "median_ns": 19867.6, "min_ns": 19714.4, "max_ns": 19916.3, "repetitions_ns": [19714.4, 19748.0, 19867.6, 19872.2, 19916.3]},
            {"bench_run_id": 4, "commit": "3d4e5f6", "time": "2026-11-13T09:21:00Z", "median_ns": 19750.8, "min_ns": 19696.9, "max_ns": 19846.0, "repetitions_ns": [19696.9, 19734.2, 19750.8, 19775.4, 19846.0]},
            {"bench_run_id": 5, "commit": "7a8b9c0", "time": "2026-11-14T10:28:00Z", "median_ns": 19877.4, "min_ns": 19669.8, "max_ns": 19921.6, "repetitions_ns": [19669.8, 19722.6, 19877.4, 19910.6, 19921.6]},
            {"bench_run_id": 6, "commit": "d1e2f3a", "time": "2026-11-15T11:35:00Z", "median_ns": 19752.9, "min_ns": 19634.9, "max_ns": 19812.4, "repetitions_ns": [19634.9, 19644.7, 19752.9, 19757.6, 19812.4]},
            {"bench_run_id": 7, "commit": "4b5c6d7", "time": "2026-11-16T09:42:00Z", "median_ns": 19863.1, "min_ns": 19656.1, "max_ns": 19896.1, "repetitions_ns": [19656.1, 19721.0, 19863.1, 19883.5, 19896.1]},
            {"bench_run_id": 8, "commit": "8e9f0a1", "time": "2026-11-17T10:49:00Z", "median_ns": 19718.0, "min_ns": 19717.0, "max_ns": 19790.0, "repetitions_ns": [19717.0, 19717.2, 19718.0, 19767.6, 19790.0]},
            {"bench_run_id": 9, "commit": "c2d3e4f", "time": "2026-11-18T11:56:00Z", "median_ns": 22803.5, "min_ns": 22606.2, "max_ns": 22871.3, "repetitions_ns": [22606.2, 22649.4, 22803.5, 22862.4, 22871.3]},
            {"bench_run_id": 10, "commit": "a5b6c7d", "time": "2026-11-19T09:03:00Z", "median_ns": 22645.1, "min_ns": 22521.7, "max_ns": 22756.2, "repetitions_ns": [22521.7, 22642.1, 22645.1, 22722.7, 22756.2]},
            {"bench_run_id": 11, "commit": "e8f9a0b", "time": "2026-11-20T10:10:00Z", "median_ns": 22831.2, "min_ns": 22358.2, "max_ns": 23065.8, "repetitions_ns": [22358.2, 22765.5, 22831.2, 22872.1, 23065.8]},
            {"bench_run_id": 12, "commit": "6e3e21d", "time": "2026-11-21T11:17:00Z", "median_ns": 22753.5, "min_ns": 22595.1, "max_ns": 22948.4, "repetitions_ns": [22595.1, 22676.0, 22753.5, 22946.5, 22948.4]}
          ],
          "change_points": [
            {"index": 8, "commit": "c2d3e4f", "before_ns": 19863.1, "after_ns": 22803.5, "change": 0.148, "p_value": 0.002}
          ]
        },
        {
          "benchmark": "rmsnorm/cuda/rows=1024,cols=8192/fp32 <b>&amp; not bold</b>",
          "problem": "rows=1024,cols=8192;fp32",
          "points": [
            {"bench_run_id": 1, "commit": "1a2b3c4", "time": "2026-11-10T09:00:00Z", "median_ns": 21429.9, "min_ns": 21283.8, "max_ns": 21652.6, "repetitions_ns": [21283.8, 21388.6, 21429.9, 21544.3, 21652.6]},
            {"bench_run_id": 2, "commit": "5d6e7f8", "time": "2026-11-11T10:07:00Z", "median_ns": 21328.5, "min_ns": 21205.7, "max_ns": 21563.5, "repetitions_ns": [21205.7, 21252.5, 21328.5, 21377.1, 21563.5]},
            {"bench_run_id": 3, "commit": "9a0b1c2", "time": "2026-11-12T11:14:00Z", "median_ns": 21367.8, "min_ns": 21257.8, "max_ns": 21427.7, "repetitions_ns": [21257.8, 21347.9, 21367.8, 21403.1, 21427.7]},
            {"bench_run_id": 4, "commit": "3d4e5f6", "time": "2026-11-13T09:21:00Z", "median_ns": 21399.9, "min_ns": 21329.0, "max_ns": 21599.6, "repetitions_ns": [21329.0, 21353.5, 21399.9, 21428.1, 21599.6]},
            {"bench_run_id": 5, "commit": "7a8b9c0", "time": "2026-11-14T10:28:00Z", "median_ns": 21557.4, "min_ns": 21443.9, "max_ns": 21603.4, "repetitions_ns": [21443.9, 21485.8, 21557.4, 21567.7, 21603.4]},
            {"bench_run_id": 6, "commit": "d1e2f3a", "time": "2026-11-15T11:35:00Z", "median_ns": 21341.7, "min_ns": 21140.2, "max_ns": 21470.4, "repetitions_ns": [21140.2, 21225.7, 21341.7, 21375.6, 21470.4]},
            {"bench_run_id": 7, "commit": "4b5c6d7", "time": "2026-11-16T09:42:00Z", "median_ns": 21226.2, "min_ns": 21212.4, "max_ns": 21377.1, "repetitions_ns": [21212.4, 21215.7, 21226.2, 21354.3, 21377.1]},
            {"bench_run_id": 8, "commit": "8e9f0a1", "time": "2026-11-17T10:49:00Z", "median_ns": 21339.3, "min_ns": 21041.3, "max_ns": 21577.3, "repetitions_ns": [21041.3, 21096.8, 21339.3, 21410.1, 21577.3]},
            {"bench_run_id": 9, "commit": "c2d3e4f", "time": "2026-11-18T11:56:00Z", "median_ns": 21457.0, "min_ns": 21249.4, "max_ns": 21590.8, "repetitions_ns": [21249.4, 21270.4, 21457.0, 21549.3, 21590.8]},
            {"bench_run_id": 10, "commit": "a5b6c7d", "time": "2026-11-19T09:03:00Z", "median_ns": 21431.4, "min_ns": 21315.8, "max_ns": 21482.7, "repetitions_ns": [21315.8, 21423.4, 21431.4, 21450.8, 21482.7]},
            {"bench_run_id": 11, "commit": "e8f9a0b", "time": "2026-11-20T10:10:00Z", "median_ns": 21325.8, "min_ns": 21277.9, "max_ns": 21483.4, "repetitions_ns": [21277.9, 21308.1, 21325.8, 21379.1, 21483.4]},
            {"bench_run_id": 12, "commit": "6e3e21d", "time": "2026-11-21T11:17:00Z", "median_ns": 21375.1, "min_ns": 21179.8, "max_ns": 21554.3, "repetitions_ns": [21179.8, 21340.5, 21375.1, 21406.9, 21554.3]}
          ],
          "change_points": []
        }
      ],
      "latest": {
        "bench_run_id": 12,
        "commit": "6e3e21d",
        "time": "2026-11-21T11:17:00Z",
        "rows": [
          {
            "problem": "rows=4096,cols=4096;bf16",
            "tuned_ns": 22753.5,
            "default_ns": 31700.0,
            "baseline": "copy",
            "baseline_ns": 17900.0,
            "bytes_per_second": 2949746456589.096,
            "flops_per_second": 2949386424066.627,
            "percent_of_ceiling": 78.7,
            "config_source": "database",
            "config": {
              "block_threads": 256,
              "threads_per_row": 32,
              "vector_bytes": 16,
              "blocks_per_sm": 8,
              "row_storage": "registers"
            }
          },
          {
            "problem": "rows=1024,cols=8192;fp32",
            "tuned_ns": 21375.1,
            "default_ns": 27900.0,
            "baseline": "copy",
            "baseline_ns": 18300.0,
            "bytes_per_second": 3141114287184.621,
            "flops_per_second": 1569790644254.296,
            "percent_of_ceiling": 85.6,
            "config_source": "database",
            "config": {
              "block_threads": 512,
              "threads_per_row": 64,
              "vector_bytes": 16,
              "blocks_per_sm": 4,
              "row_storage": "registers"
            }
          },
          {
            "problem": "rows=32768,cols=1024;bf16",
            "tuned_ns": 52300.0,
            "default_ns": null,
            "baseline": null,
            "baseline_ns": null,
            "bytes_per_second": 2566343709369.0244,
            "flops_per_second": 2566304550669.216,
            "percent_of_ceiling": null,
            "config_source": "default",
            "config": {
              "block_threads": 256,
              "threads_per_row": 256,
              "vector_bytes": 4,
              "blocks_per_sm": 0,
              "row_storage": "registers"
            }
          }
        ]
      },
      "tuning": [
        {
          "problem": "rows=4096,cols=4096;bf16",
          "space_valid": 900,
          "parameters": ["block_threads", "threads_per_row", "vector_bytes", "blocks_per_sm", "row_storage"],
          "evaluations": [
            {
              "order": 1,
              "median_ns": 62586.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 2,
              "median_ns": 50395.9,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 3,
              "median_ns": 31401.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 4,
              "median_ns": 31033.5,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 5,
              "median_ns": 34546.9,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 6,
              "median_ns": 38376.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 7,
              "median_ns": 61074.0,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 8,
              "median_ns": 32880.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 9,
              "median_ns": 27222.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 10,
              "median_ns": 31141.2,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 11,
              "median_ns": 36911.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 12,
              "median_ns": 45595.9,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 13,
              "median_ns": 39468.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 14,
              "median_ns": 23376.2,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 15,
              "median_ns": 26732.8,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 16,
              "median_ns": 51955.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 512,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 17,
              "median_ns": 23998.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 18,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 19,
              "median_ns": 25702.7,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 20,
              "median_ns": 24172.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 21,
              "median_ns": 85286.9,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 22,
              "median_ns": 28095.9,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 23,
              "median_ns": 36397.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 24,
              "median_ns": 28330.2,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 25,
              "median_ns": 30419.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 26,
              "median_ns": 20608.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 27,
              "median_ns": 69238.8,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 28,
              "median_ns": 24941.8,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 29,
              "median_ns": 66559.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 30,
              "median_ns": 44505.6,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 31,
              "median_ns": 27260.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 32,
              "median_ns": 22956.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 33,
              "median_ns": 35070.3,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 34,
              "median_ns": 22091.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 35,
              "median_ns": 21359.3,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 36,
              "median_ns": 41576.5,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 37,
              "median_ns": 39025.1,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 38,
              "median_ns": 44066.8,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 39,
              "median_ns": 29019.2,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 40,
              "median_ns": 30817.2,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 41,
              "median_ns": 23165.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 42,
              "median_ns": 41868.9,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 43,
              "median_ns": 22448.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 44,
              "median_ns": 61314.5,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 45,
              "median_ns": 36380.2,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 46,
              "median_ns": 40174.2,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 47,
              "median_ns": 55530.8,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 48,
              "median_ns": 23324.1,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 49,
              "median_ns": 34223.2,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 50,
              "median_ns": 28079.6,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 51,
              "median_ns": 32989.0,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 52,
              "median_ns": 31076.0,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 53,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 54,
              "median_ns": 23885.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 55,
              "median_ns": 25002.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 56,
              "median_ns": 33910.1,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 57,
              "median_ns": null,
              "outcome": "timeout",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 58,
              "median_ns": 35631.9,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 59,
              "median_ns": 25466.3,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 60,
              "median_ns": 21074.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 61,
              "median_ns": 33319.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 62,
              "median_ns": 26834.1,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 63,
              "median_ns": 26702.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 64,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 65,
              "median_ns": 40189.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 66,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 67,
              "median_ns": null,
              "outcome": "wrong_result",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 68,
              "median_ns": 62269.6,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 69,
              "median_ns": 67836.7,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 70,
              "median_ns": 38283.8,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 71,
              "median_ns": 26354.8,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 72,
              "median_ns": 30829.4,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 73,
              "median_ns": 20750.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 74,
              "median_ns": 30604.1,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 75,
              "median_ns": 49199.1,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 76,
              "median_ns": 29381.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 77,
              "median_ns": 56121.5,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 78,
              "median_ns": 24746.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 79,
              "median_ns": 24405.2,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 80,
              "median_ns": 22228.5,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 81,
              "median_ns": 42946.4,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 82,
              "median_ns": 100265.1,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 83,
              "median_ns": 77067.4,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 84,
              "median_ns": 35528.8,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 85,
              "median_ns": 28167.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 86,
              "median_ns": 30758.0,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 87,
              "median_ns": 29337.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 88,
              "median_ns": null,
              "outcome": "wrong_result",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 89,
              "median_ns": 44557.6,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 90,
              "median_ns": 42594.5,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 91,
              "median_ns": null,
              "outcome": "wrong_result",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 92,
              "median_ns": 25249.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 93,
              "median_ns": 32467.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 94,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 95,
              "median_ns": 25032.2,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 96,
              "median_ns": 34811.6,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 97,
              "median_ns": 23947.6,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 98,
              "median_ns": 25210.6,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 99,
              "median_ns": 36618.7,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 100,
              "median_ns": 44153.7,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 101,
              "median_ns": 23989.7,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 102,
              "median_ns": 41503.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 103,
              "median_ns": 32739.4,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 104,
              "median_ns": 49125.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 105,
              "median_ns": 27289.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 106,
              "median_ns": 29453.2,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 107,
              "median_ns": 44149.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 108,
              "median_ns": 29665.8,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 109,
              "median_ns": 19253.7,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 110,
              "median_ns": 42039.1,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 111,
              "median_ns": 34662.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 112,
              "median_ns": 21190.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 113,
              "median_ns": 44072.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 114,
              "median_ns": 21710.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 115,
              "median_ns": 27067.1,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 116,
              "median_ns": 32406.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 117,
              "median_ns": 25009.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 118,
              "median_ns": 33594.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 119,
              "median_ns": 26290.6,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 120,
              "median_ns": 38435.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 121,
              "median_ns": 36006.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 122,
              "median_ns": 18954.6,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 123,
              "median_ns": 28219.6,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 124,
              "median_ns": 74776.1,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 125,
              "median_ns": 28572.6,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 126,
              "median_ns": 72278.7,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 127,
              "median_ns": 41300.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 128,
              "median_ns": 69074.1,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 129,
              "median_ns": 49539.6,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 130,
              "median_ns": 60733.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 131,
              "median_ns": 24986.6,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 132,
              "median_ns": 34393.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 133,
              "median_ns": 46359.0,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 134,
              "median_ns": 50870.1,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 135,
              "median_ns": 40830.7,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 136,
              "median_ns": 51616.2,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 512,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 137,
              "median_ns": 21676.2,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 138,
              "median_ns": 29845.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 139,
              "median_ns": 27665.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 140,
              "median_ns": 20703.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 141,
              "median_ns": 37183.5,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 512,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 142,
              "median_ns": 35801.6,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 143,
              "median_ns": 23261.1,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 144,
              "median_ns": 20939.1,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 145,
              "median_ns": 82889.2,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 146,
              "median_ns": 39354.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 147,
              "median_ns": 25308.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 148,
              "median_ns": 26016.4,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 149,
              "median_ns": 28159.8,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 150,
              "median_ns": 19212.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 151,
              "median_ns": 22847.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 152,
              "median_ns": 33758.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 153,
              "median_ns": 26192.7,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 154,
              "median_ns": 34919.8,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 155,
              "median_ns": 22608.2,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 156,
              "median_ns": 38791.7,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 157,
              "median_ns": 82388.7,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 158,
              "median_ns": 27822.0,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 159,
              "median_ns": 89540.5,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 160,
              "median_ns": 32637.5,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 161,
              "median_ns": 20094.6,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 162,
              "median_ns": 31054.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 163,
              "median_ns": 27286.8,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 164,
              "median_ns": 35258.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 165,
              "median_ns": 84859.6,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 166,
              "median_ns": 34800.6,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 167,
              "median_ns": 30338.2,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 168,
              "median_ns": 24534.6,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 169,
              "median_ns": 39390.3,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 170,
              "median_ns": 20868.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 171,
              "median_ns": 39189.7,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 172,
              "median_ns": 27241.8,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 173,
              "median_ns": 33284.7,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 174,
              "median_ns": 58617.9,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 175,
              "median_ns": 37150.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 176,
              "median_ns": 26189.6,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 177,
              "median_ns": 23698.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 178,
              "median_ns": 46573.5,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 179,
              "median_ns": 38818.6,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 180,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 181,
              "median_ns": 32774.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 182,
              "median_ns": 47038.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 183,
              "median_ns": 52723.4,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 184,
              "median_ns": 45109.9,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 185,
              "median_ns": 36275.2,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 186,
              "median_ns": 46490.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 187,
              "median_ns": 29198.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 188,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 189,
              "median_ns": 54897.3,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 190,
              "median_ns": 57249.2,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 191,
              "median_ns": 25641.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 192,
              "median_ns": 25432.9,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 193,
              "median_ns": 41466.7,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 194,
              "median_ns": 22860.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 195,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 196,
              "median_ns": 36604.7,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 197,
              "median_ns": 44124.7,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 198,
              "median_ns": 35284.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 199,
              "median_ns": 31773.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 200,
              "median_ns": 25958.0,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 201,
              "median_ns": 32454.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 202,
              "median_ns": 22555.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 203,
              "median_ns": 24231.4,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 204,
              "median_ns": 74327.4,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 205,
              "median_ns": 20163.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 206,
              "median_ns": 38425.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 207,
              "median_ns": 36126.9,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 208,
              "median_ns": 20728.7,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 209,
              "median_ns": 29353.6,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 210,
              "median_ns": 30951.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 211,
              "median_ns": null,
              "outcome": "timeout",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 212,
              "median_ns": 43566.6,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 213,
              "median_ns": 27478.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 214,
              "median_ns": 23407.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 215,
              "median_ns": 24982.3,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 216,
              "median_ns": 40812.3,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 217,
              "median_ns": 33643.6,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 218,
              "median_ns": 24860.3,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 219,
              "median_ns": 29255.2,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 220,
              "median_ns": 69184.4,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 221,
              "median_ns": 53015.1,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 222,
              "median_ns": 33839.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 223,
              "median_ns": 26646.9,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 224,
              "median_ns": 36349.6,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 225,
              "median_ns": 32067.2,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 226,
              "median_ns": 22050.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 227,
              "median_ns": 35168.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 228,
              "median_ns": 43705.9,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 229,
              "median_ns": 29195.6,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 230,
              "median_ns": 40483.0,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 231,
              "median_ns": 38359.2,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 232,
              "median_ns": 34950.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 512,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 233,
              "median_ns": 34356.9,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 234,
              "median_ns": 44971.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 235,
              "median_ns": 28431.1,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 236,
              "median_ns": 34391.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 237,
              "median_ns": 25999.2,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 238,
              "median_ns": 53578.7,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 239,
              "median_ns": 49929.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 512,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 240,
              "median_ns": 38277.7,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 241,
              "median_ns": 43555.5,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 242,
              "median_ns": 29296.2,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 243,
              "median_ns": 26589.8,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 244,
              "median_ns": 28096.6,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 245,
              "median_ns": 42403.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 246,
              "median_ns": 35514.1,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 247,
              "median_ns": 51536.5,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 248,
              "median_ns": 27509.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 249,
              "median_ns": 31048.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 16,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 250,
              "median_ns": 27830.7,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 251,
              "median_ns": 29048.6,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 252,
              "median_ns": 32601.9,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 253,
              "median_ns": 49120.0,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 254,
              "median_ns": 54442.0,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 255,
              "median_ns": 35867.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 256,
              "median_ns": 30741.8,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 257,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 258,
              "median_ns": 40454.8,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 259,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 512,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 260,
              "median_ns": 38680.4,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 261,
              "median_ns": 31025.5,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 262,
              "median_ns": 24216.5,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 263,
              "median_ns": 30802.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 264,
              "median_ns": 53897.9,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 16,
                "vector_bytes": 4,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 265,
              "median_ns": 24186.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 266,
              "median_ns": 51627.3,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "shared"
              }
            },
            {
              "order": 267,
              "median_ns": 30990.1,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 268,
              "median_ns": 37858.9,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 269,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 270,
              "median_ns": null,
              "outcome": "wrong_result",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 271,
              "median_ns": 28740.4,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 272,
              "median_ns": 30315.1,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 273,
              "median_ns": 57885.2,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 1024,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 274,
              "median_ns": 38866.9,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 275,
              "median_ns": 29863.9,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 276,
              "median_ns": 42477.5,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 277,
              "median_ns": 41820.5,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 278,
              "median_ns": null,
              "outcome": "wrong_result",
              "config": {
                "block_threads": 128,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 279,
              "median_ns": 31531.5,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 128,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 280,
              "median_ns": 32094.0,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 281,
              "median_ns": 40584.9,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 282,
              "median_ns": 27282.2,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 283,
              "median_ns": 25986.2,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 284,
              "median_ns": 27106.1,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 256,
                "vector_bytes": 8,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 285,
              "median_ns": 26754.0,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 32,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            },
            {
              "order": 286,
              "median_ns": 47973.2,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 32,
                "vector_bytes": 4,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 287,
              "median_ns": 28963.0,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 256,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "registers"
              }
            },
            {
              "order": 288,
              "median_ns": 57586.3,
              "outcome": "ok",
              "config": {
                "block_threads": 64,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 4,
                "row_storage": "shared"
              }
            },
            {
              "order": 289,
              "median_ns": 37910.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 16,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 290,
              "median_ns": 53729.3,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 512,
                "vector_bytes": 4,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 291,
              "median_ns": null,
              "outcome": "launch_error",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 292,
              "median_ns": 32836.2,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 128,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 293,
              "median_ns": 36474.6,
              "outcome": "ok",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 294,
              "median_ns": 48725.3,
              "outcome": "ok",
              "config": {
                "block_threads": 128,
                "threads_per_row": 8,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "shared"
              }
            },
            {
              "order": 295,
              "median_ns": 30466.9,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 2,
                "row_storage": "registers"
              }
            },
            {
              "order": 296,
              "median_ns": 54487.7,
              "outcome": "ok",
              "config": {
                "block_threads": 1024,
                "threads_per_row": 8,
                "vector_bytes": 4,
                "blocks_per_sm": 8,
                "row_storage": "registers"
              }
            },
            {
              "order": 297,
              "median_ns": 23280.7,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 8,
                "blocks_per_sm": 4,
                "row_storage": "registers"
              }
            },
            {
              "order": 298,
              "median_ns": 24882.9,
              "outcome": "ok",
              "config": {
                "block_threads": 512,
                "threads_per_row": 64,
                "vector_bytes": 16,
                "blocks_per_sm": 1,
                "row_storage": "registers"
              }
            },
            {
              "order": 299,
              "median_ns": null,
              "outcome": "wrong_result",
              "config": {
                "block_threads": 64,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 8,
                "row_storage": "shared"
              }
            },
            {
              "order": 300,
              "median_ns": null,
              "outcome": "wrong_result",
              "config": {
                "block_threads": 256,
                "threads_per_row": 8,
                "vector_bytes": 16,
                "blocks_per_sm": 0,
                "row_storage": "shared"
              }
            }
          ]
        }
      ]
    },
    {
      "id": "softmax-cpu-2",
      "family": "softmax",
      "backend": "cpu",
      "device": "AMD EPYC 9654 96-Core Processor",
      "device_fingerprint": "cpu:AMD EPYC 9654 96-Core Processor:192 threads:avx512",
      "history": [],
      "latest": null,
      "tuning": [
        {
          "problem": "rows=512,cols=4096;fp32",
          "space_valid": null,
          "parameters": ["threads", "rows_per_task", "vector_width", "unroll", "exp"],
          "evaluations": [
            {
              "order": 1,
              "median_ns": 491951.3,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 2,
              "median_ns": 3273469.3,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 3,
              "median_ns": 591505.7,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 4,
              "median_ns": 66844.6,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 5,
              "median_ns": 182312.3,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 6,
              "median_ns": 2003718.4,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 7,
              "median_ns": 10017778.8,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 16,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 8,
              "median_ns": 140104.0,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 9,
              "median_ns": 130259.3,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 10,
              "median_ns": 127134.4,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 11,
              "median_ns": 4846687.1,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 12,
              "median_ns": 1289849.3,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 13,
              "median_ns": 185815.0,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 14,
              "median_ns": 49516.3,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 15,
              "median_ns": 41643.6,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 64,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 16,
              "median_ns": 214130.9,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 17,
              "median_ns": 261285.1,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 18,
              "median_ns": 2060944.9,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 19,
              "median_ns": 1218215.6,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 16,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 20,
              "median_ns": 345312.4,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 21,
              "median_ns": 1814495.7,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 16,
                "vector_width": 1,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 22,
              "median_ns": 783880.3,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 23,
              "median_ns": 349952.0,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 24,
              "median_ns": 731343.5,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 25,
              "median_ns": 478528.1,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 26,
              "median_ns": 110995.0,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 16,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 27,
              "median_ns": 199528.5,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 28,
              "median_ns": 145573.3,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 29,
              "median_ns": 352102.5,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 1,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 30,
              "median_ns": 137670.8,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 31,
              "median_ns": 274303.1,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 16,
                "vector_width": 4,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 32,
              "median_ns": 4839211.8,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 1,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 33,
              "median_ns": null,
              "outcome": "crashed",
              "config": {
                "threads": 8,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 34,
              "median_ns": 1931342.6,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 35,
              "median_ns": 1956991.5,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 36,
              "median_ns": 4409145.5,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 37,
              "median_ns": 3013620.4,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 38,
              "median_ns": 431727.4,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 1,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 39,
              "median_ns": 278975.2,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 40,
              "median_ns": 91534.9,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 41,
              "median_ns": 1577483.1,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 42,
              "median_ns": 277620.3,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 43,
              "median_ns": 640872.4,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 44,
              "median_ns": 1487369.2,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 45,
              "median_ns": 985129.2,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 4,
                "vector_width": 16,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 46,
              "median_ns": 277430.3,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 47,
              "median_ns": 268571.4,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 48,
              "median_ns": 497847.5,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 49,
              "median_ns": 335710.0,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 50,
              "median_ns": 1012467.3,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 51,
              "median_ns": 1851156.5,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 52,
              "median_ns": 155572.4,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 53,
              "median_ns": 60604.3,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 54,
              "median_ns": 634836.3,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 55,
              "median_ns": 346649.8,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 56,
              "median_ns": 546213.5,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 57,
              "median_ns": 289582.0,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 58,
              "median_ns": 1431537.2,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 59,
              "median_ns": 7282060.6,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 60,
              "median_ns": 192221.5,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 61,
              "median_ns": 477725.6,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 62,
              "median_ns": 1273898.2,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 63,
              "median_ns": 159319.0,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 64,
              "median_ns": 1387843.9,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 65,
              "median_ns": 304735.3,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 66,
              "median_ns": 356235.8,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 67,
              "median_ns": 3187520.0,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 68,
              "median_ns": 4429192.0,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 69,
              "median_ns": 234736.0,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 4,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 70,
              "median_ns": 157205.2,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 71,
              "median_ns": 828095.2,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 72,
              "median_ns": 232676.4,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 64,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 73,
              "median_ns": 585647.9,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 74,
              "median_ns": 2880355.1,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 16,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 75,
              "median_ns": 121503.9,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 76,
              "median_ns": 843729.3,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 77,
              "median_ns": 6813058.0,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 78,
              "median_ns": 82345.5,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 64,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 79,
              "median_ns": 505626.3,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 16,
                "vector_width": 4,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 80,
              "median_ns": 383483.9,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 81,
              "median_ns": 322149.0,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 82,
              "median_ns": 348158.4,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 83,
              "median_ns": 80179.9,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 16,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 84,
              "median_ns": 495549.3,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 1,
                "vector_width": 1,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 85,
              "median_ns": 1191989.7,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 86,
              "median_ns": 67587.5,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 87,
              "median_ns": 2689270.9,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 88,
              "median_ns": 70472.8,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 89,
              "median_ns": 441997.1,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 90,
              "median_ns": 3408136.8,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 16,
                "vector_width": 1,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 91,
              "median_ns": 154614.6,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 92,
              "median_ns": 249995.6,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 93,
              "median_ns": 152736.1,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 16,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 94,
              "median_ns": 1893358.4,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 95,
              "median_ns": 251126.0,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 96,
              "median_ns": 188901.1,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 97,
              "median_ns": null,
              "outcome": "crashed",
              "config": {
                "threads": 16,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 98,
              "median_ns": 215617.4,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 99,
              "median_ns": 4835440.1,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 16,
                "vector_width": 1,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 100,
              "median_ns": 366242.2,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 101,
              "median_ns": 123861.0,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 102,
              "median_ns": 1695608.5,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 103,
              "median_ns": 940872.9,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 104,
              "median_ns": 46933.9,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 105,
              "median_ns": 596234.9,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 106,
              "median_ns": 234099.4,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 107,
              "median_ns": 102425.7,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 108,
              "median_ns": 2239854.6,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 109,
              "median_ns": 188541.6,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 110,
              "median_ns": 2399118.2,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 1,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 111,
              "median_ns": 166018.2,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 16,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 112,
              "median_ns": 1215103.5,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 113,
              "median_ns": 344460.5,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 114,
              "median_ns": 361980.3,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 115,
              "median_ns": 505797.5,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 116,
              "median_ns": 382986.6,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 117,
              "median_ns": 711633.5,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 118,
              "median_ns": 74407.6,
              "outcome": "ok",
              "config": {
                "threads": 32,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 119,
              "median_ns": 206784.6,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 120,
              "median_ns": 131002.0,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 4,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 121,
              "median_ns": 971279.1,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 122,
              "median_ns": 131275.2,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 123,
              "median_ns": 7187228.4,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 64,
                "vector_width": 1,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 124,
              "median_ns": 375558.3,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 64,
                "vector_width": 4,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 125,
              "median_ns": 582815.2,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 16,
                "vector_width": 1,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 126,
              "median_ns": 698163.7,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 1,
                "vector_width": 4,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 127,
              "median_ns": 258722.0,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 128,
              "median_ns": 3711632.1,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 129,
              "median_ns": 1431874.4,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 130,
              "median_ns": 1220448.9,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 131,
              "median_ns": 197413.6,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 4,
                "vector_width": 4,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 132,
              "median_ns": 585336.9,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 133,
              "median_ns": 266340.3,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 134,
              "median_ns": 262840.4,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 1,
                "vector_width": 16,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 135,
              "median_ns": 411229.4,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 136,
              "median_ns": 99373.7,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 4,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 137,
              "median_ns": 48116.1,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 138,
              "median_ns": 936821.1,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 139,
              "median_ns": 3552051.6,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 1,
                "vector_width": 1,
                "unroll": 1,
                "exp": "poly"
              }
            },
            {
              "order": 140,
              "median_ns": 953622.9,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 4,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 141,
              "median_ns": 690991.3,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 64,
                "vector_width": 8,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 142,
              "median_ns": 173157.0,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 143,
              "median_ns": 1465427.8,
              "outcome": "ok",
              "config": {
                "threads": 2,
                "rows_per_task": 1,
                "vector_width": 8,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 144,
              "median_ns": 680312.7,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 4,
                "vector_width": 1,
                "unroll": 1,
                "exp": "libm"
              }
            },
            {
              "order": 145,
              "median_ns": 877293.1,
              "outcome": "ok",
              "config": {
                "threads": 8,
                "rows_per_task": 1,
                "vector_width": 1,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 146,
              "median_ns": 120754.7,
              "outcome": "ok",
              "config": {
                "threads": 16,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 4,
                "exp": "poly"
              }
            },
            {
              "order": 147,
              "median_ns": 4138059.3,
              "outcome": "ok",
              "config": {
                "threads": 1,
                "rows_per_task": 16,
                "vector_width": 4,
                "unroll": 2,
                "exp": "libm"
              }
            },
            {
              "order": 148,
              "median_ns": 652596.2,
              "outcome": "ok",
              "config": {
                "threads": 4,
                "rows_per_task": 16,
                "vector_width": 8,
                "unroll": 4,
                "exp": "libm"
              }
            },
            {
              "order": 149,
              "median_ns": 35212.1,
              "outcome": "ok",
              "config": {
                "threads": 128,
                "rows_per_task": 64,
                "vector_width": 16,
                "unroll": 2,
                "exp": "poly"
              }
            },
            {
              "order": 150,
              "median_ns": 103325.4,
              "outcome": "ok",
              "config": {
                "threads": 64,
                "rows_per_task": 4,
                "vector_width": 16,
                "unroll": 1,
                "exp": "poly"
              }
            }
          ]
        }
      ]
    }
  ]
};

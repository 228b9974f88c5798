/* ktune::kernels as a plain C interface, for FFI (Python ctypes, Rust, Julia) and C programs.
 * The same calls as ktune/kernels.hpp: see there for what they do.
 *
 *   ktune_context* context = NULL;
 *   if (ktune_context_create(NULL, &context) != KTUNE_OK) puts(ktune_last_error());
 *   ktune_tensor tensors[] = {{"x", x}, {"weight", w}, {"y", y}};
 *   ktune_dim dims[] = {{"rows", 4096}, {"cols", 4096}};
 *   int status = ktune_run(context, "rmsnorm", tensors, 3, dims, 2, "bf16", NULL);
 *
 * Every function returns KTUNE_OK or an error code; ktune_last_error() then holds the message
 * (naming the argument) for the calling thread. No function throws or aborts. */
#ifndef KTUNE_KERNELS_H
#define KTUNE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  KTUNE_OK = 0,
  KTUNE_BAD_ARGUMENT = 2,
  KTUNE_NO_DEVICE = 3,
  KTUNE_UNSUPPORTED = 4,
  KTUNE_BACKEND_FAILURE = 5
};

typedef struct ktune_context ktune_context;
typedef struct {
  const char* name;
  const void* data;
} ktune_tensor;
typedef struct {
  const char* name;
  int64_t value;
} ktune_dim;

/* backend: "cuda", "hip", "vulkan", "cpu", or NULL for the first with a device. */
int ktune_context_create(const char* backend, ktune_context** context);
/* Device `device` (0, 1, ...) of `backend` (not NULL here). */
int ktune_context_open(const char* backend, int device, ktune_context** context);
void ktune_context_destroy(ktune_context* context);
/* Valid while the context lives. */
const char* ktune_context_backend(const ktune_context* context);
const char* ktune_context_device(const ktune_context* context);

int ktune_allocate(ktune_context* context, size_t bytes, void** memory);
int ktune_release(ktune_context* context, void* memory);
int ktune_copy_to_device(ktune_context* context, void* device, const void* host, size_t bytes);
int ktune_copy_to_host(ktune_context* context, void* host, const void* device, size_t bytes);
int ktune_synchronize(ktune_context* context);
int ktune_tensor_bytes(ktune_context* context, const char* family, const char* tensor, const ktune_dim* dims,
                       size_t dim_count, const char* precision, size_t* bytes);

/* precision: "fp32", "tf32", "fp16", "bf16", "fp8_e4m3". stream: a CUstream or hipStream_t, or NULL. */
int ktune_run(ktune_context* context, const char* family, const ktune_tensor* tensors, size_t tensor_count,
              const ktune_dim* dims, size_t dim_count, const char* precision, void* stream);

/* The config ktune_run takes for these dims and precision, as JSON: {"source", "level", "config"
 * (the parameters as a JSON object), "description", "measurement_id", "tuned_shape"}. *json stays
 * valid until this thread's next call of ktune_choose or ktune_use_config. */
int ktune_choose(ktune_context* context, const char* family, const ktune_dim* dims, size_t dim_count,
                 const char* precision, const char** json);
/* From now on ktune_run takes `config` (a JSON object of the family's parameters, as `ktune export`
 * writes an entry's "config") for these dims and precision on this context; checked now (see
 * Context::use_config in kernels.hpp). *json as ktune_choose's, or pass NULL. */
int ktune_use_config(ktune_context* context, const char* family, const ktune_dim* dims, size_t dim_count,
                     const char* precision, const char* config, const char** json);

/* Every family of this library as JSON: [{"name", "summary", "tensors": [{"name", "output",
 * "fp32_storage"}], "dims": [{"name", "default", "min", "help"}], "precisions", "backends"}].
 * *json stays valid while the library is loaded. */
int ktune_families_json(const char** json);

/* The stages a call of `family` at these dims runs, in order, as JSON: [{"family", "dims": {name:
 * value}}], empty for a family with kernels of its own (kernels::stages in kernels.hpp). *json stays
 * valid until this thread's next call of ktune_stages_json. */
int ktune_stages_json(const char* family, const ktune_dim* dims, size_t dim_count, const char* precision,
                      const char** json);

/* The message of this thread's last failed call ("" when none). */
const char* ktune_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* KTUNE_KERNELS_H */

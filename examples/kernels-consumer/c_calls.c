/* The C interface of ktune::kernels: an RMSNorm on the CPU checked against a float64 loop, the
 * family list, the config a call takes and one the caller gives, and
 * bad calls that must come back as error codes with messages naming the argument.
 * Prints one line per check; exit status 0 when all pass. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <ktune/kernels.h>

static int failures = 0;

static void expect(int condition, const char* what) {
  printf("%s %s\n", condition ? "ok" : "FAILED", what);
  if (!condition) ++failures;
}

int main(void) {
  ktune_context* context = NULL;
  int status = ktune_context_create("cpu", &context);
  expect(status == KTUNE_OK, "a CPU context");
  if (status != KTUNE_OK) {
    printf("%s\n", ktune_last_error());
    return 1;
  }
  enum { rows = 3, cols = 37 };
  float x[rows * cols], weight[cols], y[rows * cols];
  for (int i = 0; i < rows * cols; ++i) x[i] = (float)sin(0.37 * i);
  for (int c = 0; c < cols; ++c) weight[c] = 0.5f + 0.01f * (float)c;
  ktune_tensor tensors[] = {{"x", x}, {"weight", weight}, {"out", y}};
  ktune_dim dims[] = {{"rows", rows}, {"cols", cols}};
  status = ktune_run(context, "rmsnorm", tensors, 3, dims, 2, "fp32", NULL);
  expect(status == KTUNE_OK, "rmsnorm fp32 runs");
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += (double)x[r * cols + c] * x[r * cols + c];
    const double inv = 1.0 / sqrt(sum / cols + 1e-6);
    for (int c = 0; c < cols; ++c) {
      const double want = x[r * cols + c] * inv * weight[c];
      const double diff = fabs(want - y[r * cols + c]);
      if (diff > worst) worst = diff;
    }
  }
  printf("largest difference from the float64 loop: %.3g\n", worst);
  expect(worst < 1e-5, "rmsnorm matches the float64 loop");

  status = ktune_run(context, "rmsnorm", tensors, 3, dims, 1, "fp32", NULL);
  expect(status == KTUNE_BAD_ARGUMENT && strstr(ktune_last_error(), "cols") != NULL, "a missing dim names it");
  ktune_tensor null_weight[] = {{"x", x}, {"weight", NULL}, {"out", y}};
  status = ktune_run(context, "rmsnorm", null_weight, 3, dims, 2, "fp32", NULL);
  expect(status == KTUNE_BAD_ARGUMENT && strstr(ktune_last_error(), "weight") != NULL, "a null tensor names it");
  status = ktune_run(context, "rmsnorm", tensors, 3, dims, 2, "fp64", NULL);
  expect(status == KTUNE_BAD_ARGUMENT && strstr(ktune_last_error(), "fp64") != NULL, "an unknown precision names it");
  status = ktune_run(context, "no_such_family", tensors, 3, dims, 2, "fp32", NULL);
  expect(status == KTUNE_BAD_ARGUMENT && strstr(ktune_last_error(), "no_such_family") != NULL,
         "an unknown family names it");
  /* The families as JSON, the config a call takes, and a config given by the caller. */
  const char* json = NULL;
  status = ktune_families_json(&json);
  expect(status == KTUNE_OK && strstr(json, "\"rmsnorm\"") != NULL, "the families list rmsnorm");
  status = ktune_choose(context, "rmsnorm", dims, 2, "fp32", &json);
  expect(status == KTUNE_OK && strstr(json, "\"source\":\"default\"") != NULL, "the default config is chosen");
  static char given[512];
  const char* config = strstr(json, "\"config\":");
  const char* end = config ? strchr(config, '}') : NULL;
  if (config && end && end - config < (long)sizeof(given)) {
    memcpy(given, config + 9, (size_t)(end - config - 8));  /* the config object, as the library wrote it */
    given[end - config - 8] = '\0';
  }
  status = ktune_use_config(context, "rmsnorm", dims, 2, "fp32", given, &json);
  expect(status == KTUNE_OK && strstr(json, "\"source\":\"given\"") != NULL, "a given config is taken");
  status = ktune_run(context, "rmsnorm", tensors, 3, dims, 2, "fp32", NULL);
  expect(status == KTUNE_OK, "rmsnorm runs the given config");
  status = ktune_use_config(context, "rmsnorm", dims, 2, "fp32", "{\"threads\": 2}", NULL);
  expect(status == KTUNE_BAD_ARGUMENT && strstr(ktune_last_error(), "missing") != NULL,
         "an incomplete config names what is missing");

  ktune_context* missing = NULL;
  status = ktune_context_create("martian", &missing);
  expect(status == KTUNE_BAD_ARGUMENT && missing == NULL, "an unknown backend is a bad argument");
  ktune_context_destroy(context);
  return failures == 0 ? 0 : 1;
}

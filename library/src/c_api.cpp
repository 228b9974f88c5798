// The C interface (ktune/kernels.h) over ktune::kernels: every call catches what the C++ API
// throws and returns its code, keeping the message for ktune_last_error().
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ktune/kernels.h"
#include "ktune/kernels.hpp"

struct ktune_context {
  ktune::kernels::Context context;
  std::string backend;
  std::string device;
};

namespace {

namespace kk = ktune::kernels;

thread_local std::string last_error;
thread_local std::string last_choice;  // what ktune_choose and ktune_use_config hand out
thread_local std::string last_stages;  // what ktune_stages_json hands out

template <class Body>
int guarded(Body&& body) {
  try {
    body();
    last_error.clear();
    return KTUNE_OK;
  } catch (const kk::Error& e) {
    last_error = e.what();
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return KTUNE_BACKEND_FAILURE;
  } catch (const std::exception& e) {
    last_error = e.what();
    return KTUNE_BACKEND_FAILURE;
  }
}

void require(const void* pointer, const char* name) {
  if (!pointer) throw kk::Error(kk::ErrorCode::bad_argument, std::string(name) + " is null");
}

kk::Backend backend_named(const std::string& name) {
  for (kk::Backend backend : {kk::Backend::cuda, kk::Backend::hip, kk::Backend::vulkan, kk::Backend::cpu})
    if (kk::to_string(backend) == name) return backend;
  throw kk::Error(kk::ErrorCode::bad_argument, "backend: '" + name + "' is not one of cuda, hip, vulkan, cpu");
}

kk::Precision precision_named(const char* name) {
  require(name, "precision");
  for (kk::Precision p : {kk::Precision::fp32, kk::Precision::tf32, kk::Precision::fp16, kk::Precision::bf16,
                          kk::Precision::fp8_e4m3})
    if (kk::to_string(p) == name) return p;
  throw kk::Error(kk::ErrorCode::bad_argument,
                  "precision: '" + std::string(name) + "' is not one of fp32, tf32, fp16, bf16, fp8_e4m3");
}

std::vector<kk::DimArgument> dims_of(const ktune_dim* dims, size_t count) {
  if (count > 0) require(dims, "dims");
  std::vector<kk::DimArgument> out;
  for (size_t i = 0; i < count; ++i) {
    require(dims[i].name, "dims[i].name");
    out.push_back({dims[i].name, dims[i].value});
  }
  return out;
}

const char* choice_json(const kk::ConfigChoice& choice, const std::string& family, const ktune_context& context) {
  last_choice = nlohmann::json{{"family", family},
                               {"backend", context.backend},
                               {"device", context.device},
                               {"source", choice.source},
                               {"level", choice.level},
                               {"config", nlohmann::json::parse(choice.config_json)},
                               {"description", choice.config},
                               {"measurement_id", choice.measurement_id},
                               {"tuned_shape", choice.tuned_shape}}
                    .dump();
  return last_choice.c_str();
}

std::string families_as_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const kk::FamilyInfo& family : kk::families()) {
    nlohmann::json tensors = nlohmann::json::array(), dims = nlohmann::json::array();
    nlohmann::json precisions = nlohmann::json::array(), backends = nlohmann::json::array();
    for (const kk::TensorInfo& t : family.tensors)
      tensors.push_back({{"name", t.name}, {"output", t.is_output}, {"fp32_storage", t.fp32_storage}});
    for (const kk::DimInfo& d : family.dims)
      dims.push_back({{"name", d.name}, {"default", d.default_value}, {"min", d.min_value}, {"help", d.help}});
    for (kk::Precision p : family.precisions) precisions.push_back(std::string(kk::to_string(p)));
    for (kk::Backend b : family.backends) backends.push_back(std::string(kk::to_string(b)));
    out.push_back({{"name", family.name},
                   {"summary", family.summary},
                   {"tensors", tensors},
                   {"dims", dims},
                   {"precisions", precisions},
                   {"backends", backends}});
  }
  return out.dump();
}

// The C handle of an opened context, with the names ktune_context_backend/device hand out.
ktune_context* handle_of(kk::Context opened) {
  auto* handle = new ktune_context{std::move(opened), "", ""};
  handle->backend = std::string(kk::to_string(handle->context.backend()));
  handle->device = handle->context.device_name();
  return handle;
}

}  // namespace

extern "C" {

int ktune_context_create(const char* backend, ktune_context** context) {
  return guarded([&] {
    require(context, "context");
    *context = nullptr;
    *context = handle_of(backend ? kk::Context(backend_named(backend)) : kk::Context());
  });
}

int ktune_context_open(const char* backend, int device, ktune_context** context) {
  return guarded([&] {
    require(context, "context");
    require(backend, "backend");
    *context = nullptr;
    if (device < 0) throw kk::Error(kk::ErrorCode::bad_argument, "device: " + std::to_string(device) + " is negative");
    *context = handle_of(kk::Context(backend_named(backend), device));
  });
}

void ktune_context_destroy(ktune_context* context) { delete context; }

const char* ktune_context_backend(const ktune_context* context) { return context ? context->backend.c_str() : ""; }
const char* ktune_context_device(const ktune_context* context) { return context ? context->device.c_str() : ""; }

int ktune_allocate(ktune_context* context, size_t bytes, void** memory) {
  return guarded([&] {
    require(context, "context");
    require(memory, "memory");
    *memory = context->context.allocate(bytes);
  });
}

int ktune_release(ktune_context* context, void* memory) {
  return guarded([&] {
    require(context, "context");
    context->context.release(memory);
  });
}

int ktune_copy_to_device(ktune_context* context, void* device, const void* host, size_t bytes) {
  return guarded([&] {
    require(context, "context");
    context->context.copy_to_device(device, host, bytes);
  });
}

int ktune_copy_to_host(ktune_context* context, void* host, const void* device, size_t bytes) {
  return guarded([&] {
    require(context, "context");
    context->context.copy_to_host(host, device, bytes);
  });
}

int ktune_synchronize(ktune_context* context) {
  return guarded([&] {
    require(context, "context");
    context->context.synchronize();
  });
}

int ktune_tensor_bytes(ktune_context* context, const char* family, const char* tensor, const ktune_dim* dims,
                       size_t dim_count, const char* precision, size_t* bytes) {
  return guarded([&] {
    require(context, "context");
    require(family, "family");
    require(tensor, "tensor");
    require(bytes, "bytes");
    *bytes = context->context.tensor_bytes(family, tensor, dims_of(dims, dim_count), precision_named(precision));
  });
}

int ktune_run(ktune_context* context, const char* family, const ktune_tensor* tensors, size_t tensor_count,
              const ktune_dim* dims, size_t dim_count, const char* precision, void* stream) {
  return guarded([&] {
    require(context, "context");
    require(family, "family");
    if (tensor_count > 0) require(tensors, "tensors");
    std::vector<kk::TensorArgument> named;
    for (size_t i = 0; i < tensor_count; ++i) {
      require(tensors[i].name, "tensors[i].name");
      named.push_back({tensors[i].name, tensors[i].data});
    }
    context->context.run(family, named, dims_of(dims, dim_count), precision_named(precision), stream);
  });
}

int ktune_choose(ktune_context* context, const char* family, const ktune_dim* dims, size_t dim_count,
                 const char* precision, const char** json) {
  return guarded([&] {
    require(context, "context");
    require(family, "family");
    require(json, "json");
    const kk::ConfigChoice choice = context->context.choose(family, dims_of(dims, dim_count), precision_named(precision));
    *json = choice_json(choice, family, *context);
  });
}

int ktune_use_config(ktune_context* context, const char* family, const ktune_dim* dims, size_t dim_count,
                     const char* precision, const char* config, const char** json) {
  return guarded([&] {
    require(context, "context");
    require(family, "family");
    require(config, "config");
    const kk::ConfigChoice choice =
        context->context.use_config(family, dims_of(dims, dim_count), precision_named(precision), config);
    if (json) *json = choice_json(choice, family, *context);
  });
}

int ktune_families_json(const char** json) {
  return guarded([&] {
    require(json, "json");
    static const std::string all = families_as_json();
    *json = all.c_str();
  });
}

int ktune_stages_json(const char* family, const ktune_dim* dims, size_t dim_count, const char* precision,
                      const char** json) {
  return guarded([&] {
    require(family, "family");
    require(json, "json");
    nlohmann::json out = nlohmann::json::array();
    for (const kk::StageInfo& stage : kk::stages(family, dims_of(dims, dim_count), precision_named(precision))) {
      nlohmann::json stage_dims = nlohmann::json::object();
      for (const auto& [name, value] : stage.dims) stage_dims[name] = value;
      out.push_back({{"family", stage.family}, {"dims", stage_dims}});
    }
    last_stages = out.dump();
    *json = last_stages.c_str();
  });
}

const char* ktune_last_error(void) { return last_error.c_str(); }

}  // extern "C"

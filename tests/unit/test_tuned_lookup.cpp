// Tests of the lookup code that every generated tuned/<family>.hpp carries
// (db/export/tuned_lookup.hpp), on that file's example family: the fallback chain device ->
// architecture -> vendor -> default, the name normalisation, the precision preference, the
// nearest-shape rule, the resource check and the architecture defaults. Built with warnings as
// errors (tests/CMakeLists.txt), as a consumer of a generated header may be.
#include "db/export/tuned_lookup.hpp"

#include <gtest/gtest.h>

namespace {

namespace tuned = ktune::tuned::example;

constexpr tuned::DeviceQuery kEpyc{
    .backend = "cpu", .device = "AMD EPYC 7B13", .architecture = "x86_64-avx2", .vendor = "amd"};
constexpr tuned::DeviceQuery kOtherAvx2{
    .backend = "cpu", .device = "Intel Xeon", .architecture = "x86_64-avx2", .vendor = "intel"};
constexpr tuned::DeviceQuery kOtherAmd{
    .backend = "cpu", .device = "AMD EPYC 9654", .architecture = "x86_64-avx512", .vendor = "amd"};
constexpr tuned::DeviceQuery kH200{
    .backend = "cuda", .device = "NVIDIA H200", .architecture = "sm_90", .vendor = "nvidia"};

// The lookup is usable at compile time. (GCC's UndefinedBehaviorSanitizer instruments the pointer
// comparisons it makes, which then no longer fold to constants: the sanitizer build skips these.)
#if !defined(__SANITIZE_ADDRESS__)
static_assert(tuned::lookup(kEpyc, tuned::Shape{.rows = 256, .cols = 1024}).threads == 2);
static_assert(tuned::lookup_entry(tuned::DeviceQuery{}, tuned::Shape{.rows = 1, .cols = 1}).level ==
              tuned::MatchLevel::default_config);
#endif
static_assert(tuned::to_string(tuned::MatchLevel::architecture) == "architecture");

std::int64_t answering_id(const tuned::LookupResult& found) {
  return found.entry == nullptr ? -1 : found.entry->measurement_id;
}

TEST(TunedLookup, ExactDeviceAndShape) {
  const tuned::LookupResult found = tuned::lookup_entry(kEpyc, {.rows = 256, .cols = 1024});
  EXPECT_EQ(found.level, tuned::MatchLevel::device);
  EXPECT_EQ(answering_id(found), 11);
  EXPECT_EQ(found.config.threads, 2);
  EXPECT_EQ(found.config.vector_width, 8);
}

TEST(TunedLookup, FallsBackToArchitectureThenVendorThenDefault) {
  const tuned::LookupResult by_architecture = tuned::lookup_entry(kOtherAvx2, {.rows = 1024, .cols = 1024});
  EXPECT_EQ(by_architecture.level, tuned::MatchLevel::architecture);
  EXPECT_EQ(answering_id(by_architecture), 22);

  const tuned::LookupResult by_vendor = tuned::lookup_entry(kOtherAmd, {.rows = 4096, .cols = 4096});
  EXPECT_EQ(by_vendor.level, tuned::MatchLevel::vendor);
  EXPECT_EQ(answering_id(by_vendor), 12);

  const tuned::DeviceQuery unknown{.backend = "vulkan", .device = "Mali", .architecture = "valhall", .vendor = "arm"};
  const tuned::LookupResult by_default = tuned::lookup_entry(unknown, {.rows = 256, .cols = 1024});
  EXPECT_EQ(by_default.level, tuned::MatchLevel::default_config);
  EXPECT_EQ(by_default.entry, nullptr);
  EXPECT_EQ(by_default.config.threads, tuned::default_config.threads);
}

TEST(TunedLookup, BackendMustMatchAtEveryLevel) {
  tuned::DeviceQuery query = kH200;
  query.backend = "hip";
  EXPECT_EQ(tuned::lookup_entry(query, {.rows = 1024, .cols = 1024}).level, tuned::MatchLevel::default_config);
}

TEST(TunedLookup, NamesCompareNormalisedAndEmptyMatchesNothing) {
  const tuned::DeviceQuery spelled{
      .backend = " CPU", .device = "amd  epyc\t7b13 ", .architecture = "", .vendor = ""};
  EXPECT_EQ(answering_id(tuned::lookup_entry(spelled, {.rows = 256, .cols = 1024})), 11);
  const tuned::DeviceQuery empty_device{.backend = "cpu", .device = "", .architecture = "", .vendor = ""};
  EXPECT_EQ(tuned::lookup_entry(empty_device, {.rows = 256, .cols = 1024}).level,
            tuned::MatchLevel::default_config);
}

TEST(TunedLookup, PrefersTheRequestedPrecision) {
  EXPECT_EQ(answering_id(tuned::lookup_entry(kEpyc, {.rows = 256, .cols = 1024}, "fp16")), 13);
  // fp16 is preferred over the exact shape of another precision.
  EXPECT_EQ(answering_id(tuned::lookup_entry(kEpyc, {.rows = 4096, .cols = 4096}, "FP16")), 13);
  // A precision nobody tuned: the nearest shape of any precision.
  EXPECT_EQ(answering_id(tuned::lookup_entry(kEpyc, {.rows = 4096, .cols = 4096}, "bf16")), 12);
}

TEST(TunedLookup, NearestShapeByLogDistance) {
  EXPECT_EQ(answering_id(tuned::lookup_entry(kEpyc, {.rows = 512, .cols = 1024})), 11);
  EXPECT_EQ(answering_id(tuned::lookup_entry(kEpyc, {.rows = 2048, .cols = 4096})), 12);
  // Extents below 1 count as 1.
  EXPECT_EQ(answering_id(tuned::lookup_entry(kEpyc, {.rows = 0, .cols = -5})), 11);
  EXPECT_DOUBLE_EQ(tuned::detail::extent_ratio(256, 1024), 4.0);
  EXPECT_DOUBLE_EQ(tuned::detail::extent_ratio(1024, 256), 4.0);
}

TEST(TunedLookup, ResourceCheck) {
  const tuned::TunedEntry& h200 = *tuned::lookup_entry(kH200, {.rows = 1024, .cols = 1024}).entry;
  EXPECT_EQ(tuned::required_shared_memory(h200), 49152);
  EXPECT_TRUE(tuned::validate_config(h200, {.max_shared_memory_per_block = 49152, .max_threads_per_block = 1024}));
  EXPECT_FALSE(tuned::validate_config(h200, {.max_shared_memory_per_block = 32768, .max_threads_per_block = 1024}));
  EXPECT_FALSE(tuned::validate_config(h200, {.max_shared_memory_per_block = 49152, .max_threads_per_block = 128}));
}

TEST(TunedLookup, ArchitectureDefaultFallsBackToFallback) {
  ASSERT_NE(tuned::architecture_default("hopper"), nullptr);
  EXPECT_EQ(tuned::architecture_default("hopper")->block, 128);
  ASSERT_NE(tuned::architecture_default("rdna3"), nullptr);
  EXPECT_EQ(tuned::architecture_default("rdna3")->target, "fallback");
  EXPECT_FALSE(tuned::architecture_default("rdna3")->tuned);
}

}  // namespace

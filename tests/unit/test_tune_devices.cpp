// --devices parsing, and the messages that carry jobs and results between threads and MPI ranks.
#include <gtest/gtest.h>

#include "kernels/family.hpp"
#include "tests/unit/input_error_expectations.hpp"
#include "tuner/tune/evaluation_job.hpp"
#include "tuner/tune/tune_devices.hpp"

namespace ktune {
namespace {

TEST(DeviceList, AllAndIndices) {
  EXPECT_EQ(parse_device_list("all", "cuda", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_device_list("2,0", "cuda", 4), (std::vector<int>{2, 0}));
  EXPECT_EQ(parse_device_list("0", "cpu", 1), (std::vector<int>{0}));
}

TEST(DeviceList, BadTextIsInputErrorNamingTheItem) {
  EXPECT_MENTIONS(error_of([] { parse_device_list("0,x", "cuda", 4); }), "'x' is not a device index");
  EXPECT_MENTIONS(error_of([] { parse_device_list("0,", "cuda", 4); }), "'' is not a device index");
  EXPECT_MENTIONS(error_of([] { parse_device_list("-1", "cuda", 4); }), "'-1' is not a device index");
  EXPECT_MENTIONS(error_of([] { parse_device_list("1,1", "cuda", 4); }), "device 1 is listed twice");
}

TEST(DeviceList, MissingDevicesAreBackendUnavailable) {
  EXPECT_THROW(parse_device_list("4", "cuda", 4), BackendUnavailable);
  EXPECT_THROW(parse_device_list("all", "cuda", 0), BackendUnavailable);
  try {
    parse_device_list("1", "cpu", 1);
    FAIL() << "no error";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("has no device 1 on this host (it finds 1"), std::string::npos) << e.what();
  }
}

TEST(EvaluationMessages, RoundTripThroughJson) {
  const KernelFamily& family = find_family("rmsnorm");
  EvaluationTask task{"cpu", family.make_problem({{"rows", 37}, {"cols", 1001}}, Precision::fp32), {}, 12.5};
  task.settings.seed = 99;
  const EvaluationTask task_back = EvaluationTask::from_json(task.to_json());
  EXPECT_EQ(task_back.problem.key(), task.problem.key());
  EXPECT_EQ(task_back.settings.seed, 99u);
  EXPECT_EQ(task_back.config_timeout_s, 12.5);

  Config config;
  config.values = {{"unroll", Value{std::int64_t{4}}}, {"threads", Value{std::int64_t{2}}}};
  FinishedEvaluation done;
  done.job = EvaluationJob{7, 3, config, {{"grid_x", 5}}};
  done.result.outcome = Outcome::wrong_result;
  done.result.message = "max error 0.5";
  done.evaluation_seconds = 0.25;
  done.device = "rank 2 cpu:0";
  done.failure = HarnessFailure{3, "no device"};
  const FinishedEvaluation back = FinishedEvaluation::from_json(done.to_json());
  EXPECT_EQ(back.job.id, 7u);
  EXPECT_EQ(back.job.index, 3u);
  EXPECT_EQ(back.job.config, config);  // parameter order survives
  EXPECT_EQ(back.job.launch.at("grid_x"), 5);
  EXPECT_EQ(back.result.outcome, Outcome::wrong_result);
  EXPECT_EQ(back.result.message, "max error 0.5");
  EXPECT_EQ(back.evaluation_seconds, 0.25);
  EXPECT_EQ(back.device, "rank 2 cpu:0");
  ASSERT_TRUE(back.failure.has_value());
  EXPECT_EQ(back.failure->exit_code, 3);
  EXPECT_EQ(back.failure->message, "no device");
}

}  // namespace
}  // namespace ktune

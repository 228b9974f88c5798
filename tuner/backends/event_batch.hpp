// The batched timing of the GPU backends, whose runtimes' events work alike (CUDA's, HIP's):
// `count` samples queued back to back on the default stream with 2*count+1 events, e[2i] ..
// e[2i+1] the work between samples (restores and the cache eviction), e[2i+1] .. e[2i+2] the
// variant; the host waits once, on the last event.
//
// `Events` is one runtime's events as static functions: `Event`, create(), record(Event),
// wait(Event), elapsed_ms(Event from, Event to) (errors thrown as the runtime's error type) and
// destroy(Event) (no-throw).
#pragma once

#include <cstddef>
#include <vector>

#include "tuner/measure/engine.hpp"

namespace ktune {

template <class Events>
class EventBatch {
 public:
  EventBatch() = default;
  EventBatch(const EventBatch&) = delete;
  EventBatch& operator=(const EventBatch&) = delete;
  ~EventBatch() {
    for (auto event : events_) Events::destroy(event);
  }

  // `between()` queues what precedes a sample's launch, `launch()` the variant itself.
  template <class Between, class Launch>
  SampleBatch time(std::size_t count, Between between, Launch launch) {
    while (events_.size() < 2 * count + 1) events_.push_back(Events::create());
    Events::record(events_[0]);
    for (std::size_t i = 0; i < count; ++i) {
      between();
      Events::record(events_[2 * i + 1]);
      launch();
      Events::record(events_[2 * i + 2]);
    }
    Events::wait(events_[2 * count]);
    SampleBatch batch;
    batch.kernel_ns.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      batch.between_ns += Events::elapsed_ms(events_[2 * i], events_[2 * i + 1]) * 1e6;
      batch.kernel_ns.push_back(Events::elapsed_ms(events_[2 * i + 1], events_[2 * i + 2]) * 1e6);
    }
    return batch;
  }

 private:
  std::vector<typename Events::Event> events_;
};

}  // namespace ktune

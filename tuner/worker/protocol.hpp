// The tuner <-> worker protocol: one JSON object per line over a pair of pipes. The same
// protocol carries every backend; only the worker knows which device it drives.
//
//   tuner -> worker                                  worker -> tuner
//   {"op":"hello"}                                   {"ok":true,"device":{...}}
//   {"op":"prepare","problem":..,"seed":n}         {"ok":true}   (inputs + reference ready)
//   {"op":"evaluate","problem":..,                    {"ok":true,"result":{...}}
//    "config":[[name,value],..],"build":{binary,
//    entry,launch},"settings":{..}}
//   {"op":"quit"}                                    (exits 0)
//   any request that fails in the harness            {"ok":false,"error":"...","exit_code":N}
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tuner/core/config.hpp"
#include "tuner/core/problem.hpp"

namespace ktune::protocol {

// Configs travel as [[name, value], ...] so the parameter order survives the trip.
nlohmann::json config_to_json(const Config& config);
Config config_from_json(const nlohmann::json& json);

// Problems travel as {"family", "dims": {...}, "precision"}; the worker rebuilds the dim order
// from the family's declaration.
Problem problem_from_json(const nlohmann::json& json);

}  // namespace ktune::protocol

// Exports a family's best measurements from the store as tuned/<family>.hpp and .json, with the
// parameter list and untuned default taken from the family's search space.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "kernels/family.hpp"
#include "tuner/core/search_space.hpp"

namespace ktune {

struct ExportedFamily {
  std::filesystem::path header;
  std::size_t entries = 0;
};

// Each backend's space has its own parameters and one header holds one backend's Config struct,
// so each backend's headers go to <out_dir>/<backend>/<family>.hpp, in namespace
// ktune::tuned::<backend>::<family>: two backends' tables can be used in one program.
std::filesystem::path export_dir_for(const std::filesystem::path& out_dir, const std::string& backend);
// The family's dims that pick an option (a layout, an epilogue) or must match exactly (DimSpec):
// a tuned entry answers a lookup only where the asked shape has its values of these. The
// generated header's same_options() and `ktune bench --tuned` both follow this list.
std::vector<std::string> option_dim_names(const KernelFamily& family);
// `space` replaces the family's search-space file (a T1 spec's own space); nullptr for the file.
ExportedFamily export_tuned_family(Store& store, const std::string& family, const std::string& backend,
                                   const std::filesystem::path& out_dir, const SearchSpace* space = nullptr);

}  // namespace ktune

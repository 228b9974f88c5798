#include "tuner/report/report_writer.hpp"

#include "tuner/core/input_file.hpp"

#include <cstdlib>
#include <fstream>

#include "ktune/embedded/report_assets.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/output_file.hpp"

namespace ktune {

std::filesystem::path chartjs_path() {
  const char* override_path = std::getenv("KTUNE_CHARTJS");
  return override_path && *override_path ? override_path : "/usr/share/javascript/chart.js/chart.min.js";
}

std::vector<std::filesystem::path> write_report(const std::filesystem::path& dir, const nlohmann::json& data) {
  const std::filesystem::path chartjs = chartjs_path();
  std::ifstream chart_in(chartjs, std::ios::binary);
  if (!chart_in)
    throw BackendUnavailable("Chart.js is missing (" + chartjs.string() +
                             "): install Debian's libjs-chart.js (apt-get install libjs-chart.js), or point "
                             "KTUNE_CHARTJS at a chart.min.js of Chart.js 3");
  chart_in.close();
  // Chart.js is about 200 KB; a limit keeps KTUNE_CHARTJS=/dev/zero from exhausting memory.
  const std::string chart_text = read_file_bytes(chartjs, std::size_t{16} << 20);

  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir))
    throw InputError("--out " + dir.string() + ": cannot create the directory" +
                     (error ? " (" + error.message() + ")" : std::string(" (a file of that name exists)")));

  std::vector<std::filesystem::path> written;
  for (const EmbeddedFile& asset : embedded::report_assets) {
    const std::string name = std::filesystem::path(asset.path).filename().string();
    const std::filesystem::path target = dir / (name == "report.html" ? "index.html" : name);
    write_file_atomically(target, asset.text, "--out");
    written.push_back(target);
  }
  write_file_atomically(dir / "chart.min.js", chart_text, "--out");
  written.push_back(dir / "chart.min.js");
  // NaN and infinities dump as null; invalid UTF-8 (a compiler log) is replaced, never fatal.
  const std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  write_file_atomically(dir / "data.js", "window.KTUNE_REPORT = " + json + ";\n", "--out");
  written.push_back(dir / "data.js");
  return written;
}

}  // namespace ktune

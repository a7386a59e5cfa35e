// Copyright (c) Aspen contributors.
// aspen-vision: writes the analyser page for a profile report, or compares two.
//
//   aspen-vision REPORT_DIR_OR_FILE [-o report.html]
//   aspen-vision A B -o compare.html
//
// A report is a profile.json or profile.pop, or a directory holding one; the
// pvti host traces (*.pvti) in the report's directory are shown beside the
// device trace. Exits 1 with a message naming the file when a report cannot
// be read.
#include "ReportFile.hpp"
#include "VisionHtml.hpp"

#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>

namespace {

int usage(std::ostream &os, int code) {
  os << "usage: aspen-vision REPORT [REPORT_B] [-o OUTPUT.html] [-v]\n"
        "  REPORT    a profile.json or profile.pop, or a directory holding one\n"
        "  REPORT_B  a second report: the page compares the two side by side\n"
        "  -o FILE   the page to write (default: report.html)\n"
        "  -v        print the size of the page and the time taken\n";
  return code;
}

} // namespace

int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  std::vector<std::string> inputs;
  std::string output = "report.html";
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-o") || !std::strcmp(argv[i], "--output")) {
      if (i + 1 >= argc) {
        std::cerr << "aspen-vision: -o needs a file name\n";
        return usage(std::cerr, 2);
      }
      output = argv[++i];
    } else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      return usage(std::cout, 0);
    } else if (!std::strcmp(argv[i], "-v")) {
      verbose = true;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      std::cerr << "aspen-vision: unknown option '" << argv[i] << "'\n";
      return usage(std::cerr, 2);
    } else {
      inputs.push_back(argv[i]);
    }
  }
  if (inputs.empty() || inputs.size() > 2)
    return usage(std::cerr, 2);
  try {
    const auto start = std::chrono::steady_clock::now();
    std::vector<aspen::profile::PageReport> reports;
    for (const std::string &input : inputs) {
      std::string file;
      nlohmann::json report = aspen::profile::readReport(input, &file);
      const std::string dir = fs::path(file).parent_path().string();
      reports.push_back({file, std::move(report), aspen::profile::readHostTraces(dir.empty() ? "." : dir)});
    }
    const std::string html = aspen::profile::visionHtml(reports);
    aspen::profile::writeFileAtomically(output, html);
    if (verbose)
      std::cout << "aspen-vision: wrote " << output << " (" << html.size() << " bytes) in "
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
  } catch (const std::exception &e) {
    std::cerr << "aspen-vision: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

// Copyright (c) Aspen contributors.
// popc: compiles codelet sources into a vertex library (.gp) that
// Graph::addCodelets("file.gp") loads. Accepts Poplar's popc usage:
//
//   popc [-O0..-O3] [-g] [-I dir] [-D X[=v]] [--target ipu2,cpu] [-v] -o out.gp in.cpp... in.gp...
//   popc --list-targets | --help | --version
#include "codelets/CodeletCache.hpp"
#include "codelets/CodeletCompiler.hpp"
#include "codelets/EmbeddedFiles.hpp"
#include "poplar/Version.hpp"
#include "poplar/exceptions.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

const char *const kUsage =
    R"(Usage: popc [options] <source or .gp>... -o <output.gp>

Compiles codelets (C++ vertex classes deriving from poplar::Vertex, MultiVertex or
SupervisorVertex) into a vertex library for Aspen's simulated IPU. Sources are
compiled with clang (clang++-16, or $ASPEN_CXX) for the host with __POPC__
defined and __IPU__ not defined (the cpu build, which the IPUModel runs). When the
targets name an IPU (ipu1, ipu2, ipu21), the sources are also compiled with __IPU__
and __IPU_ARCH_VERSION__ defined (the IPU build, kept in the same library), which a
DeviceManager IPU device runs; when that build does not compile or marks a vertex
isExternalCodelet, a warning says so and the IPU device runs the cpu build. Vertex libraries (.gp) given as inputs are linked
with the compiled sources into one library. IPU assembly sources (.S, .s) have no
host build: each gets a warning and adds nothing (as Graphcore's popc adds nothing
from them to a cpu target's code); the simulated IPU runs the C++ versions of the
vertices they implement, which the C++ sources define when __IPU__ is not defined.

Options:
  -o <file>            write the vertex library to <file> (default: <first source>.gp)
  -v, --verbose        print the number of vertex types of each source
  --depfile <file>     also write a Makefile-style list of the files the library depends on
  -O0 -O1 -O2 -O3 -Os  optimisation level (default -O2)
  -g                   include debug information
  -I <dir>, -I<dir>    add an include directory
  -D <X[=v]>           define a macro;  -U <X> undefines one
  -std=<standard>      C++ language standard (default c++17)
  --target <list>      targets: comma-separated (ipu1, ipu2, ipu21, cpu, ipumodel; also
                       -target, -target=, --target=) or a JSON list whose "compile-flags"
                       are applied; an IPU target adds the IPU build (above)
  -X <flag>            pass <flag> to the compiler
  --list-targets       print the IPU targets (ipu1,ipu2,ipu21) and exit
  --version            print the version and exit
  --help               print this help and exit
Other options starting with '-' (-f..., -W..., -m...) are passed to the host compiler.
Errors are printed as <file>:<line>: ... and give a non-zero exit status.
)";

std::string defaultOutput(const std::string &source) {
  std::string base = source.substr(source.rfind('/') == std::string::npos ? 0 : source.rfind('/') + 1);
  const std::size_t dot = base.rfind('.');
  if (dot != std::string::npos)
    base = base.substr(0, dot);
  return base + ".gp";
}

bool isSourceName(const std::string &arg) {
  const std::size_t dot = arg.rfind('.');
  if (dot == std::string::npos)
    return false;
  const std::string ext = arg.substr(dot);
  return ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++" || ext == ".C" || ext == ".c" ||
         ext == ".S" || ext == ".s";
}

bool isLibraryName(const std::string &arg) {
  return arg.size() > 3 && arg.compare(arg.size() - 3, 3, ".gp") == 0;
}

/// "popc: <source>: <n> vertex types" for each source of a library.
void printCounts(const aspen::codelets::LibraryMetadata &m, const std::string &what) {
  for (std::size_t i = 0; i < m.sources.size(); ++i) {
    std::cerr << "popc: " << m.sources[i] << ": ";
    if (i < m.vertexCounts.size())
      std::cerr << m.vertexCounts[i] << " vertex types";
    else
      std::cerr << "vertex types not recorded";
    std::cerr << what << "\n";
  }
}

std::string escapeForMake(const std::string &path) {
  std::string out;
  for (char ch : path) {
    if (ch == ' ' || ch == '#')
      out += '\\';
    if (ch == '$')
      out += '$';
    out += ch;
  }
  return out;
}

/// "<output>: <sources> <local headers>", for build systems (CMake DEPFILE).
bool writeDepfile(const std::string &depfile, const std::string &output,
                  const std::vector<std::string> &sources, const std::vector<std::string> &libraries,
                  const std::vector<std::string> &includeDirs) {
  std::string text = escapeForMake(output) + ":";
  for (const std::string &s : sources)
    text += " \\\n  " + escapeForMake(s);
  for (const std::string &l : libraries)
    text += " \\\n  " + escapeForMake(l);
  for (const std::string &h : aspen::codelets::localIncludes(sources, includeDirs))
    text += " \\\n  " + escapeForMake(h);
  text += "\n";
  return aspen::codelets::writeFileAtomic(depfile, text.data(), text.size(), true);
}

/// SIGINT/SIGTERM: remove the compile's work directories, then die of the signal as before.
void removeWorkAndDie(int sig) {
  aspen::codelets::removeRegisteredWorkDirs();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

} // namespace

int main(int argc, char **argv) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action {};
    action.sa_handler = removeWorkAndDie;
    ::sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
  std::vector<std::string> flags, sources, libraries;
  std::string output, depfile;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--version") {
      // As Poplar's popc: build scripts take the third word of the first line.
      std::cout << "POPLAR version " << poplar::versionString() << "\n"
                << "popc (Aspen) " << aspen::codelets::kAspenVersion << "\n";
      return 0;
    }
    if (a == "--list-targets") {
      // As Graphcore's popc: the IPU architectures, on one line, comma-separated (PopLibs'
      // CMake replaces the commas with semicolons to make its list of targets).
      std::cout << "ipu1,ipu2,ipu21\n";
      return 0;
    }
    if (a == "-v" || a == "--verbose") {
      verbose = true;
    } else if (a == "--depfile" || a == "-MF") {
      if (i + 1 >= argc) {
        std::cerr << "popc: error: " << a << " needs a file name\n";
        return 2;
      }
      depfile = argv[++i];
    } else if (a == "-o") {
      if (i + 1 >= argc) {
        std::cerr << "popc: error: -o needs a file name\n";
        return 2;
      }
      output = argv[++i];
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2 && a[2] != '-') {
      output = a.substr(2);
    } else if ((a == "-I" || a == "-D" || a == "-U" || a == "--target" || a == "-target" || a == "-include" ||
                a == "-isystem" || a == "-X") &&
               i + 1 < argc) {
      flags.push_back(a);
      flags.push_back(argv[++i]);
    } else if (!a.empty() && a[0] == '-') {
      flags.push_back(a);
    } else if (isSourceName(a)) {
      sources.push_back(a);
    } else if (isLibraryName(a)) {
      libraries.push_back(a);
    } else {
      std::cerr << "popc: error: '" << a
                << "' is not a codelet source (.cpp, .cc, .cxx, .c) or library (.gp)\n";
      return 2;
    }
  }
  if (sources.empty() && libraries.empty()) {
    std::cerr << "popc: error: no input files\n" << kUsage;
    return 2;
  }
  if (output.empty())
    output = defaultOutput(sources.empty() ? libraries.front() : sources.front());
  // IPU assembly: warned about and left out (kUsage). A call with nothing else makes a library
  // with no vertex types, so that a build linking it with C++ libraries (PopLibs' <lib>_asm.gp)
  // goes on.
  std::vector<std::string> assembly;
  for (auto it = sources.begin(); it != sources.end();) {
    if (aspen::codelets::languageOf(*it) == aspen::codelets::SourceLanguage::Assembly) {
      std::cerr << *it << ": warning: IPU assembly has no host build; popc leaves it out (the simulated IPU "
                << "runs the C++ version of each vertex)\n";
      assembly.push_back(*it);
      it = sources.erase(it);
    } else {
      ++it;
    }
  }
  std::string emptySource;
  if (sources.empty() && libraries.empty()) {
    char name[] = "/tmp/popc-assembly-only-XXXXXX.cpp";
    const int fd = ::mkstemps(name, 4);
    const std::string text = "// popc: IPU assembly only, no host code\n";
    if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      std::cerr << "popc: error: cannot write a temporary file: " << std::strerror(errno) << "\n";
      return 1;
    }
    ::close(fd);
    emptySource = name;
    sources.push_back(emptySource);
  }
  struct RemoveEmpty {
    const std::string &path;
    ~RemoveEmpty() {
      if (!path.empty())
        ::unlink(path.c_str());
    }
  } removeEmpty{emptySource};
  try {
    const auto parsed = aspen::codelets::parseCodeletFlags(flags);
    std::vector<std::uint8_t> bytes;
    aspen::codelets::CompiledCodelets compiled;
    if (!sources.empty()) {
      std::string noIpuBuild;
      compiled = emptySource.empty()
                     ? aspen::codelets::compileForTargets(sources, parsed, &std::cerr, {}, &noIpuBuild)
                     : aspen::codelets::compileCodelets(sources, parsed, &std::cerr, {assembly.front()});
      if (!noIpuBuild.empty())
        std::cerr << "popc: warning: " << (sources.size() == 1 ? sources.front() : output) << ": "
                  << noIpuBuild
                  << "; a DeviceManager IPU device runs its cpu build (docs/codelets.md, \"Which build runs "
                     "where\")\n";
      if (verbose)
        printCounts(compiled.metadata, compiled.fromCache ? " (cached)" : "");
      bytes = std::move(compiled.gpBytes);
    }
    if (!libraries.empty()) {
      // Link: the compiled sources (if any) and every input library become one library.
      std::vector<std::vector<std::uint8_t>> inputs;
      std::vector<aspen::codelets::GpInput> parts;
      if (!bytes.empty())
        parts.push_back({bytes.data(), bytes.size(), sources.size() == 1 ? sources.front() : output});
      for (const std::string &lib : libraries)
        inputs.push_back(aspen::codelets::readBinaryFile(lib));
      for (std::size_t i = 0; i < libraries.size(); ++i) {
        parts.push_back({inputs[i].data(), inputs[i].size(), libraries[i]});
        if (verbose)
          printCounts(aspen::codelets::decodeGp(inputs[i].data(), inputs[i].size(), libraries[i]).metadata,
                      " (from " + libraries[i] + ")");
      }
      std::vector<std::uint8_t> host = aspen::codelets::linkCodeletLibraries(parts, parsed.targets).gpBytes;
      // The IPU builds link as the host builds do, an input without one taking part with its
      // host build (docs/codelets.md, "Which build runs where").
      std::vector<std::vector<std::uint8_t>> ipuBuilds;
      std::string arch;
      for (const aspen::codelets::GpInput &part : parts) {
        ipuBuilds.push_back(aspen::codelets::ipuBuildOf(part.bytes, part.size, part.name));
        if (!ipuBuilds.back().empty() && arch.empty())
          arch = aspen::codelets::decodeGp(part.bytes, part.size, part.name).metadata.ipuBuild.name;
      }
      if (!arch.empty()) {
        std::vector<aspen::codelets::GpInput> ipuParts;
        for (std::size_t i = 0; i < parts.size(); ++i)
          ipuParts.push_back(
              ipuBuilds[i].empty()
                  ? parts[i]
                  : aspen::codelets::GpInput{ipuBuilds[i].data(), ipuBuilds[i].size(), parts[i].name});
        host = aspen::codelets::withIpuBuild(
            host, aspen::codelets::linkCodeletLibraries(ipuParts, parsed.targets).gpBytes, arch);
      }
      bytes = std::move(host);
    }
    if (verbose)
      std::cerr << "popc: " << output << ": "
                << aspen::codelets::decodeGp(bytes.data(), bytes.size(), output).metadata.vertexTypes.size()
                << " vertex types\n";
    if (!aspen::codelets::writeFileAtomic(output, bytes.data(), bytes.size(), true)) {
      std::cerr << "popc: error: cannot write '" << output << "': " << std::strerror(errno) << "\n";
      return 1;
    }
    std::vector<std::string> inputs = assembly;
    for (const std::string &src : sources)
      if (src != emptySource)
        inputs.push_back(src);
    if (!depfile.empty() && !writeDepfile(depfile, output, inputs, libraries, parsed.includeDirs)) {
      std::cerr << "popc: error: cannot write '" << depfile << "'\n";
      return 1;
    }
  } catch (const poplar::graph_object_creation_error &e) {
    if (verbose)
      std::cerr << e.what() << "\n";
    // The message already holds the compiler's diagnostics (written above as well).
    std::string what = e.what();
    const std::size_t colon = what.find(":\n");
    std::cerr << "popc: error: " << (colon == std::string::npos ? what : what.substr(0, colon)) << "\n";
    return 1;
  } catch (const poplar::poplar_error &e) {
    std::cerr << "popc: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception &e) { // never exit 0 without the library
    std::cerr << "popc: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// poprun: launches the instances of a distributed Aspen program with Open MPI's mpirun, giving
// each instance the POPDIST_* environment that popdist reads (as Graphcore's poprun does).
//
//   poprun --num-instances 2 --num-replicas 4 ./train --epochs 3
//
// Flags follow Graphcore's poprun; those about V-IPU partitions are accepted and ignored, since
// the IPUs are simulated inside each instance. Exit status: the program's (mpirun's), or 2 for a
// usage error, 127 when mpirun cannot be found.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr const char *kVersion = "poprun (Aspen 0.1.0)";

struct Options {
  unsigned numInstances = 1;
  unsigned numReplicas = 1;
  unsigned ipusPerReplica = 1;
  std::vector<std::string> hosts;
  std::vector<std::string> mpiGlobalArgs;
  std::vector<std::string> mpiLocalArgs;
  std::optional<unsigned> onlyOutputFrom;
  bool printTopology = false;
  int verbosity = 0;
  std::vector<std::string> program; // the program and its arguments
};

struct UsageError {
  std::string message;
};

void printHelp() {
  std::cout << "Usage: poprun [options] program [program args]\n"
               "\n"
               "Launches instances of a program with mpirun; each owns num-replicas/num-instances\n"
               "replicas and learns its place through popdist (POPDIST_* environment variables).\n"
               "\n"
               "  -h [ --help ]                    this message\n"
               "  --version                        print the version\n"
               "  --num-instances N                number of instances (default 1)\n"
               "  --num-replicas N                 total number of replicas (default 1)\n"
               "  --ipus-per-replica N             IPUs each replica spans (default 1)\n"
               "  -H [ --host ] h1,h2,...          hosts; instances are divided evenly among them\n"
               "  --mpi-global-args \"ARGS\"         options passed to mpirun once\n"
               "  --mpi-local-args \"ARGS\"          options passed to mpirun for every instance\n"
               "  --only-output-from-instance N    suppress the output of every other instance\n"
               "  --print-topology yes|no          print which instance owns which replicas\n"
               "  -v [ --verbose ]                 print the mpirun command; -vv: more\n"
               "\n"
               "Environment: ASPEN_MPIRUN overrides the mpirun to start (default: mpirun on PATH).\n"
               "V-IPU options (--vipu-*, --num-ilds, --update-partition, --reset-partition,\n"
               "--remove-partition, --numa-aware, --offline-mode, --executable-cache-path) are\n"
               "accepted and ignored: the IPUs are simulated inside each instance.\n";
}

// Splits a string of shell-like words on whitespace, honouring single and double quotes.
std::vector<std::string> splitWords(const std::string &text) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      inWord = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord) {
        words.push_back(word);
        word.clear();
        inWord = false;
      }
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote != 0) {
    throw UsageError{"unterminated quote in '" + text + "'"};
  }
  if (inWord) {
    words.push_back(word);
  }
  return words;
}

unsigned parseCount(const std::string &flag, const std::string &value, bool allowZero = false) {
  char *end = nullptr;
  errno = 0;
  const long long n = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || n < (allowZero ? 0 : 1) || n > 1 << 20) {
    throw UsageError{flag + " expects a " + (allowZero ? "non-negative" : "positive") + " integer, got '" +
                     value + "'"};
  }
  return static_cast<unsigned>(n);
}

bool parseBool(const std::string &flag, const std::string &value) {
  if (value == "yes" || value == "true" || value == "1" || value == "on")
    return true;
  if (value == "no" || value == "false" || value == "0" || value == "off")
    return false;
  throw UsageError{flag + " expects yes or no, got '" + value + "'"};
}

Options parseArguments(int argc, char **argv) {
  Options options;
  // Flags of Graphcore's poprun that configure V-IPU partitions: meaningless on simulated IPUs.
  static const std::vector<std::string> ignoredWithValue = {"--num-ilds",         "--vipu-server-host",
                                                            "--vipu-server-port", "--vipu-server-timeout",
                                                            "--vipu-partition",   "--vipu-partition-attempts",
                                                            "--update-partition", "--reset-partition",
                                                            "--remove-partition", "--vipu-cluster",
                                                            "--vipu-allocation",  "--executable-cache-path",
                                                            "--numa-aware",       "--offline-mode",
                                                            "--host-subnet",      "--process-placement"};
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-') {
      break; // the program
    }
    if (arg == "--") {
      ++i;
      break;
    }
    std::string value;
    bool hasInlineValue = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasInlineValue = true;
    }
    auto takeValue = [&]() -> std::string {
      if (hasInlineValue)
        return value;
      if (i + 1 >= argc)
        throw UsageError{arg + " needs a value"};
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      printHelp();
      std::exit(0);
    } else if (arg == "--version") {
      std::cout << kVersion << "\n";
      std::exit(0);
    } else if (arg == "--num-instances") {
      options.numInstances = parseCount(arg, takeValue());
    } else if (arg == "--num-replicas") {
      options.numReplicas = parseCount(arg, takeValue());
    } else if (arg == "--ipus-per-replica") {
      options.ipusPerReplica = parseCount(arg, takeValue());
    } else if (arg == "-H" || arg == "--host") {
      std::stringstream list(takeValue());
      for (std::string host; std::getline(list, host, ',');) {
        if (!host.empty())
          options.hosts.push_back(host);
      }
    } else if (arg == "--mpi-global-args") {
      for (auto &word : splitWords(takeValue()))
        options.mpiGlobalArgs.push_back(word);
    } else if (arg == "--mpi-local-args") {
      for (auto &word : splitWords(takeValue()))
        options.mpiLocalArgs.push_back(word);
    } else if (arg == "--only-output-from-instance") {
      options.onlyOutputFrom = parseCount(arg, takeValue(), true);
    } else if (arg == "--print-topology") {
      options.printTopology = parseBool(arg, takeValue());
    } else if (arg == "-v" || arg == "--verbose") {
      ++options.verbosity;
    } else if (arg == "-vv") {
      options.verbosity += 2;
    } else if (std::find(ignoredWithValue.begin(), ignoredWithValue.end(), arg) != ignoredWithValue.end()) {
      (void)takeValue();
    } else {
      throw UsageError{"unknown option '" + arg + "' (see poprun --help)"};
    }
  }
  for (; i < argc; ++i)
    options.program.push_back(argv[i]);
  if (options.program.empty()) {
    throw UsageError{"no program to run (usage: poprun [options] program [program args])"};
  }
  if (options.numReplicas % options.numInstances != 0) {
    throw UsageError{"--num-replicas " + std::to_string(options.numReplicas) +
                     " cannot be divided evenly among --num-instances " +
                     std::to_string(options.numInstances) +
                     " (each instance must own the same number of replicas)"};
  }
  if (options.onlyOutputFrom && *options.onlyOutputFrom >= options.numInstances) {
    throw UsageError{"--only-output-from-instance " + std::to_string(*options.onlyOutputFrom) +
                     " is not below --num-instances " + std::to_string(options.numInstances)};
  }
  if (!options.hosts.empty() && options.numInstances % options.hosts.size() != 0) {
    throw UsageError{std::to_string(options.numInstances) + " instances cannot be divided evenly among " +
                     std::to_string(options.hosts.size()) + " hosts"};
  }
  return options;
}

// The mpirun to start: $ASPEN_MPIRUN, else mpirun on PATH.
std::optional<std::string> findMpirun() {
  if (const char *override = std::getenv("ASPEN_MPIRUN"); override != nullptr && *override != '\0') {
    if (access(override, X_OK) == 0)
      return std::string(override);
    return std::nullopt;
  }
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/mpirun";
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

std::string hostOf(const Options &options, unsigned instance) {
  if (options.hosts.empty())
    return "localhost";
  const unsigned perHost = options.numInstances / static_cast<unsigned>(options.hosts.size());
  return options.hosts[instance / perHost];
}

void printTopology(const Options &options) {
  const unsigned local = options.numReplicas / options.numInstances;
  std::cout << "poprun topology: " << options.numInstances << " instances, " << options.numReplicas
            << " replicas, " << options.ipusPerReplica << " IPUs per replica\n";
  std::cout << "  instance  host                 replicas      IPUs (simulated, per instance)\n";
  for (unsigned instance = 0; instance < options.numInstances; ++instance) {
    std::ostringstream replicas;
    replicas << instance * local << "-" << (instance + 1) * local - 1;
    std::cout << "  " << std::left;
    std::cout.width(10);
    std::cout << instance;
    std::cout.width(21);
    std::cout << hostOf(options, instance);
    std::cout.width(14);
    std::cout << replicas.str() << local * options.ipusPerReplica << "\n";
  }
  std::cout << std::right << std::flush;
}

constexpr const char *kExec = "--aspen-exec";
constexpr const char *kExecQuiet = "--aspen-exec-quiet";

/// "x" then the bytes in hex: a word made of [0-9a-fx] only, never empty.
std::string encodeWord(const std::string &word) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "x";
  for (unsigned char c : word) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::optional<std::string> decodeWord(const char *word) {
  auto nibble = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (word[0] != 'x')
    return std::nullopt;
  std::string out;
  for (const char *p = word + 1; *p; p += 2) {
    const int hi = nibble(p[0]), lo = p[1] ? nibble(p[1]) : -1;
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

// The mpirun command line: global options, then one application context per instance (so each
// gets its own replica offset and host), separated by ':'.
std::vector<std::string> buildCommand(const Options &options, const std::string &mpirun,
                                      const std::string &self) {
  std::vector<std::string> cmd = {mpirun, "--tag-output"};
  if (geteuid() == 0)
    cmd.push_back("--allow-run-as-root");
  if (options.hosts.empty()) {
    cmd.push_back("--oversubscribe"); // one machine: instances may outnumber its cores
  }
  // Variables every instance inherits from this shell: where the SDK and its caches are.
  for (const char *name : {"PATH", "LD_LIBRARY_PATH", "ASPEN_CACHE_DIR", "ASPEN_COMPILE_CACHE",
                           "POPLAR_LOG_LEVEL", "ASPEN_LOG_LEVEL", "POPLAR_ENGINE_OPTIONS",
                           "ASPEN_DIST_TIMEOUT", "ASPEN_CXX", "ASPEN_CACHE_TRUSTED_GROUP"}) {
    if (std::getenv(name) != nullptr) {
      cmd.push_back("-x");
      cmd.push_back(name);
    }
  }
  cmd.insert(cmd.end(), options.mpiGlobalArgs.begin(), options.mpiGlobalArgs.end());
  const unsigned local = options.numReplicas / options.numInstances;
  for (unsigned instance = 0; instance < options.numInstances; ++instance) {
    if (instance != 0)
      cmd.push_back(":");
    cmd.insert(cmd.end(), {"-np", "1"});
    if (!options.hosts.empty())
      cmd.insert(cmd.end(), {"-H", hostOf(options, instance)});
    const std::map<std::string, unsigned> env = {
        {"POPDIST_NUM_TOTAL_REPLICAS", options.numReplicas},
        {"POPDIST_NUM_LOCAL_REPLICAS", local},
        {"POPDIST_NUM_IPUS_PER_REPLICA", options.ipusPerReplica},
        {"POPDIST_REPLICA_INDEX_OFFSET", instance * local},
        {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", 1},
        {"POPDIST_NUM_INSTANCES", options.numInstances},
    };
    for (const auto &[name, value] : env) {
      cmd.push_back("-x");
      cmd.push_back(name + "=" + std::to_string(value));
    }
    cmd.insert(cmd.end(), options.mpiLocalArgs.begin(), options.mpiLocalArgs.end());
    // poprun itself, as a trampoline that becomes the program (silencing the instance first
    // when asked). mpirun reads its command line as syntax (a word ':' starts another
    // application, a leading '-' an option): the program and its arguments reach the
    // trampoline hex-encoded, so no word of theirs is ever seen by mpirun.
    const bool quiet = options.onlyOutputFrom && *options.onlyOutputFrom != instance;
    cmd.insert(cmd.end(), {self, quiet ? kExecQuiet : kExec});
    for (const std::string &word : options.program)
      cmd.push_back(encodeWord(word));
  }
  return cmd;
}

std::string quoted(const std::vector<std::string> &words) {
  std::string line;
  for (const auto &word : words) {
    if (!line.empty())
      line += ' ';
    const bool plain = !word.empty() && word.find_first_of(" \t\"'$\\") == std::string::npos;
    line += plain ? word : "'" + word + "'";
  }
  return line;
}

[[noreturn]] void execOrDie(const std::vector<std::string> &cmd) {
  std::vector<char *> argv;
  for (const auto &word : cmd)
    argv.push_back(const_cast<char *>(word.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  std::cerr << "poprun: cannot start '" << cmd[0] << "': " << std::strerror(errno) << "\n";
  std::exit(127);
}

} // namespace

int main(int argc, char **argv) {
  // Trampoline: poprun --aspen-exec[-quiet] <encoded program> <encoded args>... — an instance
  // (whose output is suppressed when quiet) becomes the program.
  if (argc >= 3 && (std::strcmp(argv[1], kExec) == 0 || std::strcmp(argv[1], kExecQuiet) == 0)) {
    std::vector<std::string> words;
    for (int i = 2; i < argc; ++i) {
      auto word = decodeWord(argv[i]);
      if (!word) {
        std::cerr << "poprun: malformed program word '" << argv[i] << "' (an internal error)\n";
        return 127;
      }
      words.push_back(std::move(*word));
    }
    if (std::strcmp(argv[1], kExecQuiet) == 0 &&
        (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))) {
      return 127;
    }
    std::vector<char *> args;
    for (std::string &w : words)
      args.push_back(w.data());
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::cerr << "poprun: cannot start '" << words[0] << "': " << std::strerror(errno) << "\n";
    return 127;
  }
  Options options;
  try {
    options = parseArguments(argc, argv);
  } catch (const UsageError &error) {
    std::cerr << "poprun: " << error.message << "\n";
    return 2;
  }
  const auto mpirun = findMpirun();
  if (!mpirun) {
    std::cerr << "poprun: cannot find mpirun "
              << (std::getenv("ASPEN_MPIRUN") ? std::string("at ASPEN_MPIRUN=") + std::getenv("ASPEN_MPIRUN")
                                              : std::string("on PATH"))
              << "; install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev)\n";
    return 127;
  }
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  const std::string selfPath = length > 0 ? std::string(self, static_cast<std::size_t>(length)) : argv[0];
  if (options.printTopology)
    printTopology(options);
  const auto cmd = buildCommand(options, *mpirun, selfPath);
  if (options.verbosity > 0)
    std::cerr << "poprun: running " << quoted(cmd) << "\n"
              << "poprun: each instance runs " << quoted(options.program) << "\n";
  execOrDie(cmd);
}

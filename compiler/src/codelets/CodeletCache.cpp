// Copyright (c) Aspen contributors.
#include "codelets/CodeletCache.hpp"

#include "cache/CacheFiles.hpp"

#include "codelets/ContentHash.hpp"
#include "codelets/EmbeddedFiles.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <clang-c/Index.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aspen::codelets {

namespace {

std::string envOr(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? std::string(v) : std::string();
}

std::string directoryOf(const std::string &path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The local headers a source includes, found by scanning its #include lines
/// (in every preprocessor branch: a superset is harmless for a cache key).
void hashLocalIncludes(const std::string &file, const std::string &text,
                       const std::vector<std::string> &includeDirs, ContentHasher &hasher,
                       std::set<std::string> &seen, int depth) {
  if (depth > 16)
    return;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    std::size_t i = pos;
    while (i < end && (text[i] == ' ' || text[i] == '\t'))
      ++i;
    if (i < end && text[i] == '#') {
      ++i;
      while (i < end && (text[i] == ' ' || text[i] == '\t'))
        ++i;
      if (text.compare(i, 7, "include") == 0) {
        i += 7;
        while (i < end && (text[i] == ' ' || text[i] == '\t'))
          ++i;
        if (i < end && (text[i] == '"' || text[i] == '<')) {
          const char close = text[i] == '"' ? '"' : '>';
          const std::size_t nameEnd = text.find(close, i + 1);
          if (nameEnd != std::string::npos && nameEnd < end) {
            const std::string name = text.substr(i + 1, nameEnd - i - 1);
            std::vector<std::string> candidates;
            if (!name.empty() && name[0] == '/')
              candidates.push_back(name);
            else {
              if (close == '"')
                candidates.push_back(directoryOf(file) + "/" + name);
              for (const std::string &dir : includeDirs)
                candidates.push_back(dir + "/" + name);
            }
            for (const std::string &candidate : candidates) {
              if (!isRegularFile(candidate))
                continue;
              if (seen.insert(candidate).second) {
                std::ifstream in(candidate, std::ios::binary);
                const std::string content((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
                hasher.addField(candidate).addField(content);
                hashLocalIncludes(candidate, content, includeDirs, hasher, seen, depth + 1);
              }
              break;
            }
          }
        }
      }
    }
    pos = end + 1;
  }
}

std::string libclangVersion() {
  CXString version = clang_getClangVersion();
  std::string out = clang_getCString(version) ? clang_getCString(version) : "";
  clang_disposeString(version);
  return out;
}

} // namespace

const std::string &codeletCompilerBuildId() {
  static const std::string id =
      std::string(kAspenVersion) + " " + kCodeletCompilerSourceHash + " " + libclangVersion();
  return id;
}

bool makeDirectories(const std::string &dir) {
  return !dir.empty() && cache::prepareDirectory(dir).empty();
}

std::string codeletCacheDir() {
  std::string root = envOr("ASPEN_CACHE_DIR");
  if (root.empty()) {
    const std::string xdg = envOr("XDG_CACHE_HOME");
    const std::string home = envOr("HOME");
    if (!xdg.empty())
      root = xdg + "/aspen";
    else if (!home.empty())
      root = home + "/.cache/aspen";
    else
      root = cache::perUserTempRoot();
    if (root.empty())
      return {}; // perUserTempRoot warned
  }
  std::string dir = root + "/codelets";
  if (const std::string why = cache::prepareDirectory(dir); !why.empty()) {
    cache::warnOnce("codelet cache: not using '" + dir + "': " + why +
                    "; compiled codelets are not cached (see docs/caches.md)");
    return {};
  }
  static std::mutex mutex;
  static std::set<std::string> swept;
  bool sweep = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    sweep = swept.insert(dir).second;
  }
  if (sweep) {
    const LeftoverSweep s = removeDeadWriterLeftovers(dir, 3600);
    if (s.files || s.directories)
      ASPEN_LOG(Info, "codelet cache: removed " << s.files << " temporary files and " << s.directories
                                                << " work directories of dead writers (" << s.bytes
                                                << " bytes) from " << dir);
  }
  return dir;
}

namespace {
std::uint64_t removeTree(const std::string &path);
} // namespace

std::string codeletWorkRoot() {
  const std::string dir = codeletCacheDir();
  if (!dir.empty())
    return dir;
  // A private directory of this process, removed at exit.
  static std::mutex mutex;
  static std::string scratch;
  std::lock_guard<std::mutex> lock(mutex);
  if (scratch.empty()) {
    std::error_code ec;
    std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    if (ec)
      tmp = "/tmp";
    scratch = cache::makeTempDirectory(tmp.string(), "aspen-codelets-" + std::to_string(::getpid()) + "-");
    if (scratch.empty())
      throw poplar::graph_object_creation_error(
          "Cannot create a private directory for the codelet compiler in '" + tmp.string() +
          "' (set TMPDIR or ASPEN_CACHE_DIR)");
    std::atexit([] {
      if (!scratch.empty())
        removeTree(scratch);
    });
  }
  return scratch;
}

namespace {

/// The writer pid in "<name>.tmp.<pid>.<n>" or "<pid>-<n>-<stamp>", 0 if none.
long writerPid(const std::string &name, bool workDir) {
  std::size_t start = 0;
  if (!workDir) {
    const std::size_t at = name.rfind(".tmp.");
    if (at == std::string::npos)
      return 0;
    start = at + 5;
  }
  long pid = 0;
  std::size_t i = start;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && pid < (1L << 30); ++i)
    pid = pid * 10 + (name[i] - '0');
  const char end = workDir ? '-' : '.';
  return i > start && i < name.size() && name[i] == end ? pid : 0;
}

bool processAlive(long pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::uint64_t removeTree(const std::string &path) {
  std::uint64_t bytes = 0;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return 0;
  if (S_ISDIR(st.st_mode)) {
    if (DIR *d = ::opendir(path.c_str())) {
      while (dirent *e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..")
          bytes += removeTree(path + "/" + name);
      }
      ::closedir(d);
    }
    ::rmdir(path.c_str());
  } else {
    bytes = static_cast<std::uint64_t>(st.st_size);
    ::unlink(path.c_str());
  }
  return bytes;
}

} // namespace

LeftoverSweep removeDeadWriterLeftovers(const std::string &dir, long minAgeSeconds) {
  LeftoverSweep out;
  const auto now = static_cast<long long>(::time(nullptr));
  constexpr long long kWeek = 7LL * 24 * 3600;
  auto stale = [&](const std::string &path, long pid) {
    struct stat st;
    if (pid <= 0 || ::lstat(path.c_str(), &st) != 0)
      return false;
    const long long age = now - static_cast<long long>(st.st_mtime);
    return age > kWeek || (age >= minAgeSeconds && !processAlive(pid));
  };
  auto scan = [&](const std::string &folder, bool workDirs) {
    DIR *d = ::opendir(folder.c_str());
    if (!d)
      return;
    std::vector<std::string> names;
    while (dirent *e = ::readdir(d))
      names.emplace_back(e->d_name);
    ::closedir(d);
    for (const std::string &name : names) {
      if (name == "." || name == "..")
        continue;
      const std::string path = folder + "/" + name;
      const long pid = writerPid(name, workDirs);
      if (!stale(path, pid))
        continue;
      out.bytes += removeTree(path);
      ++(workDirs ? out.directories : out.files);
    }
  };
  scan(dir, false);
  scan(dir + "/lib", false);
  scan(dir + "/src", false);
  scan(dir + "/tmp", true);
  return out;
}

namespace {

constexpr std::size_t kWorkDirSlots = 64;
constexpr std::size_t kWorkDirPathMax = 4096;
char workDirPaths[kWorkDirSlots][kWorkDirPathMax];
// 0 free, 1 being written, 2 ready (a handler reads only ready slots).
std::atomic<int> workDirState[kWorkDirSlots];

} // namespace

void registerWorkDir(const std::string &dir) {
  if (dir.size() >= kWorkDirPathMax)
    return;
  for (std::size_t i = 0; i < kWorkDirSlots; ++i) {
    int expected = 0;
    if (workDirState[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(workDirPaths[i], dir.c_str(), dir.size() + 1);
      workDirState[i].store(2);
      return;
    }
  }
}

void unregisterWorkDir(const std::string &dir) {
  for (std::size_t i = 0; i < kWorkDirSlots; ++i) {
    int expected = 2;
    if (std::strcmp(workDirPaths[i], dir.c_str()) == 0 &&
        workDirState[i].compare_exchange_strong(expected, 1)) {
      workDirPaths[i][0] = '\0';
      workDirState[i].store(0);
      return;
    }
  }
}

void removeRegisteredWorkDirs() noexcept {
  for (std::size_t i = 0; i < kWorkDirSlots; ++i) {
    if (workDirState[i].load() != 2)
      continue;
    const int fd = ::open(workDirPaths[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      alignas(8) char buffer[8192];
      for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (n <= 0)
          break;
        for (long at = 0; at < n;) {
          struct Entry {
            std::uint64_t ino;
            std::int64_t off;
            unsigned short reclen;
            unsigned char type;
            char name[1];
          };
          const auto *e = reinterpret_cast<const Entry *>(buffer + at);
          if (!(e->name[0] == '.' && (e->name[1] == '\0' || (e->name[1] == '.' && e->name[2] == '\0'))))
            ::unlinkat(fd, e->name, 0);
          at += e->reclen;
        }
      }
      ::close(fd);
    }
    ::rmdir(workDirPaths[i]);
  }
}

bool writeFileAtomic(const std::string &path, const void *data, std::size_t size, bool userFile) {
  std::string why;
  if (cache::writeAtomic(path, data, size, userFile ? cache::FileMode::User : cache::FileMode::Cache, why))
    return true;
  ASPEN_LOG(Debug, "writeFileAtomic: " << why);
  return false;
}

std::optional<std::vector<std::uint8_t>> readCacheFile(const std::string &path) {
  std::string why;
  auto bytes = cache::readEntry(path, why);
  if (!bytes && !why.empty())
    ASPEN_LOG(Warn, "codelet cache: not using " << path << " (" << why << ")");
  return bytes;
}

std::optional<std::vector<std::uint8_t>> readFileIfExists(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return std::nullopt; // absent, or a directory where a cache entry should be
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return std::nullopt;
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
      return std::nullopt;
    return bytes;
  } catch (const std::exception &) {
    return std::nullopt; // a read error
  }
}

const std::string &compilerIdentity(const std::string &cxx) {
  static std::mutex mutex;
  static std::map<std::string, std::string> identities;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = identities.find(cxx);
  if (it != identities.end())
    return it->second;
  std::string output;
  const std::string command = cxx + " --version 2>&1";
  if (FILE *pipe = ::popen(command.c_str(), "r")) {
    char buffer[512];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
      output.append(buffer, n);
    ::pclose(pipe);
  }
  ASPEN_LOG(Debug, "codelet compiler '" << cxx << "': " << output.substr(0, output.find('\n')));
  return identities.emplace(cxx, output).first->second;
}

std::vector<std::string> localIncludes(const std::vector<std::string> &sources,
                                       const std::vector<std::string> &includeDirs) {
  ContentHasher unused;
  std::set<std::string> seen;
  for (const std::string &source : sources) {
    std::ifstream in(source, std::ios::binary);
    const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    hashLocalIncludes(source, content, includeDirs, unused, seen, 0);
  }
  return std::vector<std::string>(seen.begin(), seen.end());
}

std::string codeletCacheKey(const CodeletCacheKeyInput &input) {
  ContentHasher hasher;
  hasher.addField("aspen codelet cache key v1")
      .addField(embeddedFilesHash())
      .addField(codeletCompilerBuildId());
  hasher.addField(input.compiler).addField(compilerIdentity(input.compiler));
  for (const std::string &arg : input.compilerArgs)
    hasher.addField(arg);
  std::set<std::string> seen;
  for (const std::string &source : input.sources) {
    std::ifstream in(source, std::ios::binary);
    if (!in)
      throw poplar::graph_object_creation_error("Cannot read codelet source '" + source + "'");
    const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    hasher.addField(source).addField(content);
    hashLocalIncludes(source, content, input.includeDirs, hasher, seen, 0);
  }
  return hasher.hex();
}

} // namespace aspen::codelets

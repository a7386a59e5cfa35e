// Copyright (c) Aspen contributors.
#include "cache/CacheFiles.hpp"

#include "util/Log.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>

namespace aspen::cache {

namespace {

std::string octal(mode_t mode) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04o", static_cast<unsigned>(mode & 07777));
  return buffer;
}

std::optional<gid_t> parseTrustedGroup() {
  const char *v = std::getenv("ASPEN_CACHE_TRUSTED_GROUP");
  if (!v || !*v)
    return std::nullopt;
  char *end = nullptr;
  const unsigned long n = std::strtoul(v, &end, 10);
  if (end && *end == '\0')
    return static_cast<gid_t>(n);
  std::vector<char> buffer(16384);
  struct group g;
  struct group *found = nullptr;
  if (::getgrnam_r(v, &g, buffer.data(), buffer.size(), &found) == 0 && found)
    return found->gr_gid;
  warnOnce(std::string("ASPEN_CACHE_TRUSTED_GROUP names no group ('") + v +
           "'): only your own cache files are trusted");
  return std::nullopt;
}

/// Whether `uid` is a member of `gid` (its primary group or a supplementary one).
bool memberOf(uid_t uid, gid_t gid) {
  static std::mutex mutex;
  static std::map<std::pair<uid_t, gid_t>, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find({uid, gid}); it != known.end())
    return it->second;
  bool member = false;
  std::vector<char> buffer(16384);
  struct passwd pw;
  struct passwd *found = nullptr;
  if (::getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found) == 0 && found) {
    if (found->pw_gid == gid)
      member = true;
    else {
      int n = 64;
      std::vector<gid_t> groups(static_cast<std::size_t>(n));
      if (::getgrouplist(found->pw_name, found->pw_gid, groups.data(), &n) < 0) {
        groups.resize(static_cast<std::size_t>(n));
        ::getgrouplist(found->pw_name, found->pw_gid, groups.data(), &n);
      }
      for (int i = 0; i < n && i < static_cast<int>(groups.size()); ++i)
        member = member || groups[static_cast<std::size_t>(i)] == gid;
    }
  }
  return known[{uid, gid}] = member;
}

/// Status of `path` (following links); the reason in `why` when it cannot be had.
bool statOf(const std::string &path, struct stat &st, std::string &why) {
  if (::stat(path.c_str(), &st) == 0)
    return true;
  why = "cannot inspect '" + path + "': " + std::strerror(errno);
  return false;
}

/// Checks `path` and every directory above it. `path` itself is the cache directory (no
/// sticky exemption) unless `pathIsAbove`.
std::string checkChain(const std::string &path, bool pathIsAbove = false) {
  std::vector<std::string> chain;
  for (std::filesystem::path p(path); !p.empty(); p = p.parent_path()) {
    chain.push_back(p.string());
    if (p == p.root_path() || p.parent_path() == p)
      break;
  }
  for (std::size_t i = 0; i < chain.size(); ++i) {
    struct stat st;
    std::string why;
    if (!statOf(chain[i], st, why))
      return why;
    if (!S_ISDIR(st.st_mode))
      return "'" + chain[i] + "' is not a directory";
    const std::string problem = untrustedBecause(st, i != 0 || pathIsAbove);
    if (!problem.empty())
      return "'" + chain[i] + "' " + problem;
  }
  return {};
}

mode_t directoryMode() {
  return trustedGroup() ? (S_ISGID | 0770) : 0700;
}

bool makeDirectoryChain(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0)
    return S_ISDIR(st.st_mode);
  const std::filesystem::path p(dir);
  const std::string parent = p.parent_path().string();
  if (!parent.empty() && parent != dir && !makeDirectoryChain(parent))
    return false;
  if (::mkdir(dir.c_str(), directoryMode()) != 0)
    return errno == EEXIST;
  if (trustedGroup())
    ::chmod(dir.c_str(), directoryMode()); // the umask may have taken the group's bits
  return true;
}

std::string randomSuffix() {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bytes[12];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    std::random_device device;
    for (unsigned char &b : bytes)
      b = static_cast<unsigned char>(device());
  }
  std::string out;
  for (unsigned char b : bytes)
    out += kAlphabet[b % (sizeof kAlphabet - 1)];
  return out;
}

} // namespace

std::optional<gid_t> trustedGroup() {
  // Read each time (tests and programs may set it late); the lookup is remembered.
  static std::mutex mutex;
  static std::map<std::string, std::optional<gid_t>> known;
  const char *v = std::getenv("ASPEN_CACHE_TRUSTED_GROUP");
  const std::string name = v ? v : "";
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(name); it != known.end())
      return it->second;
  }
  const std::optional<gid_t> group = parseTrustedGroup();
  std::lock_guard<std::mutex> lock(mutex);
  return known[name] = group;
}

bool trustedUser(uid_t uid) {
  if (uid == ::geteuid() || uid == 0)
    return true;
  const auto group = trustedGroup();
  return group && memberOf(uid, *group);
}

std::string untrustedBecause(const struct stat &st, bool stickyOk) {
  if (!trustedUser(st.st_uid))
    return "is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
           std::to_string(::geteuid()) + ")" +
           (trustedGroup() ? " nor a member of ASPEN_CACHE_TRUSTED_GROUP" : "");
  const auto group = trustedGroup();
  const bool groupWrites = (st.st_mode & S_IWGRP) && !(group && st.st_gid == *group);
  const bool othersWrite = (st.st_mode & S_IWOTH) != 0;
  if ((groupWrites || othersWrite) && !(stickyOk && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)))
    return std::string("is writable by ") + (othersWrite ? "others" : "its group") + " (mode " +
           octal(st.st_mode) + ")";
  return {};
}

std::string prepareDirectory(const std::string &dirGiven) {
  // Not remembered: a few stat calls, and a directory's mode may change while we run.
  std::error_code ec;
  std::string dir = std::filesystem::absolute(dirGiven, ec).lexically_normal().string();
  if (ec || dir.empty())
    return "cannot resolve '" + dirGiven + "'";
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  // What exists is checked before anything is created in it, then the whole chain again
  // (someone may have made a missing directory first) and with links resolved.
  std::filesystem::path existing(dir);
  struct stat st;
  while (::stat(existing.c_str(), &st) != 0 && existing.has_relative_path())
    existing = existing.parent_path();
  std::string why = checkChain(existing.string(), existing.string() != dir);
  if (why.empty() && !makeDirectoryChain(dir))
    why = "cannot create '" + dir + "': " + std::strerror(errno);
  if (why.empty())
    why = checkChain(dir);
  if (why.empty()) {
    char resolved[PATH_MAX];
    if (!::realpath(dir.c_str(), resolved))
      why = "cannot resolve '" + dir + "': " + std::strerror(errno);
    else if (dir != resolved)
      why = checkChain(resolved);
  }
  return why;
}

std::string perUserTempRoot() {
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec)
    tmp = "/tmp";
  const std::string root = (tmp / ("aspen-" + std::to_string(::geteuid()))).string();
  if (::mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)
    return root; // prepareDirectory names the failure
  struct stat st;
  if (::lstat(root.c_str(), &st) == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())) {
    // Someone else made it first (or planted a link there): not ours, never used.
    warnOnce(
        "the per-user cache directory '" + root + "' is " +
        (S_ISLNK(st.st_mode) ? std::string("a symbolic link") : "owned by uid " + std::to_string(st.st_uid)) +
        ": caches are not used (set ASPEN_CACHE_DIR)");
    return {};
  }
  return root;
}

int openEntry(const std::string &path, std::string &why) {
  why.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT)
      return -1;
    why = errno == ELOOP ? std::string("it is a symbolic link") : std::string(std::strerror(errno));
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0)
    why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    why = "it is not a regular file";
  else
    why = untrustedBecause(st, false);
  if (!why.empty()) {
    if (why.rfind("is ", 0) == 0)
      why = "it " + why;
    ::close(fd);
    return -1;
  }
  return fd;
}

std::optional<std::vector<std::uint8_t>> readAll(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return std::nullopt;
  std::vector<std::uint8_t> bytes;
  bytes.reserve(static_cast<std::size_t>(st.st_size));
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return std::nullopt;
    }
    if (n == 0)
      break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  return bytes;
}

std::optional<std::vector<std::uint8_t>> readEntry(const std::string &path, std::string &why) {
  const int fd = openEntry(path, why);
  if (fd < 0)
    return std::nullopt;
  auto bytes = readAll(fd);
  ::close(fd);
  if (!bytes)
    why = "it cannot be read";
  return bytes;
}

bool writeAtomic(const std::string &path, const void *data, std::size_t size, FileMode mode,
                 std::string &why) {
  const std::string prefix = path + ".tmp." + std::to_string(::getpid()) + ".";
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temp = prefix + randomSuffix();
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                mode == FileMode::Cache ? 0600 : 0666);
    if (fd < 0 && errno != EEXIST) {
      why = "cannot create '" + temp + "': " + std::strerror(errno);
      return false;
    }
  }
  if (fd < 0) {
    why = "cannot create a temporary file next to '" + path + "'";
    return false;
  }
  if (mode == FileMode::Cache && trustedGroup())
    ::fchmod(fd, 0640);
  const auto *p = static_cast<const char *>(data);
  std::size_t left = size;
  bool ok = true;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      why = "cannot write '" + temp + "': " + std::strerror(errno);
      ok = false;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && ok) {
    why = "cannot write '" + temp + "': " + std::strerror(errno);
    ok = false;
  }
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    why = "cannot rename '" + temp + "' to '" + path + "': " + std::strerror(errno);
    ok = false;
  }
  if (!ok)
    ::unlink(temp.c_str());
  return ok;
}

std::string makeTempDirectory(const std::string &parent, const std::string &prefix) {
  std::string pattern = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!::mkdtemp(buffer.data()))
    return {};
  return std::string(buffer.data());
}

void warnOnce(const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> said;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!said.insert(message).second)
      return;
  }
  ASPEN_LOG(Warn, message);
}

} // namespace aspen::cache

// Copyright (c) Aspen contributors.
// Files of the two caches (compiled executables, compiled codelets) made and read so that
// whoever else can write somewhere cannot turn a cache against its user (docs/caches.md):
// directories are checked before use, temporary files are created exclusively under
// unpredictable names, and an entry is read only if it is a regular file that a trusted
// user wrote and nobody else can change.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct stat;

namespace aspen::cache {

/// ASPEN_CACHE_TRUSTED_GROUP (a group name or number), if set and known: its members may
/// write the caches this process reads (a cache shared by a team). Unset: only this user
/// (and root).
std::optional<gid_t> trustedGroup();

/// This process's effective user, root, or a member of trustedGroup().
bool trustedUser(uid_t uid);

/// Why a file or directory with status `st` may be changed by someone untrusted, or empty:
/// owned by an untrusted user, writable by others, or writable by a group that is not
/// trustedGroup(). `stickyOk`: a sticky directory writable by others (/tmp) is fine
/// (for directories above a cache, whose entries others cannot rename).
std::string untrustedBecause(const struct stat &st, bool stickyOk);

/// Creates `dir` and its missing parents (mode 0700, or 02770 under a trusted group) and
/// checks it and every directory above it (as given and with symbolic links resolved):
/// each must be owned by a trusted user and not writable by an untrusted one; above the
/// cache, sticky directories such as /tmp are fine. Empty if `dir` may hold cache files,
/// else why not (naming the directory at fault).
std::string prepareDirectory(const std::string &dir);

/// The per-user fallback root when neither ASPEN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set:
/// `<tmp>/aspen-<uid>`, created with mode 0700. It must be a directory (never a symbolic
/// link) owned by this user; empty (with a warning) if it is not: then nothing is cached.
std::string perUserTempRoot();

/// Opens an entry for reading: a regular file (never through a symbolic link) owned by a
/// trusted user and not writable by an untrusted one. -1 if not; `why` is empty when the
/// entry does not exist, else says why it is not used.
int openEntry(const std::string &path, std::string &why);

/// The bytes of an entry opened by openEntry (the descriptor stays open), or nothing.
std::optional<std::vector<std::uint8_t>> readAll(int fd);

/// The bytes of the entry at `path` if openEntry accepts it; `why` as openEntry's.
std::optional<std::vector<std::uint8_t>> readEntry(const std::string &path, std::string &why);

/// How writeAtomic sets the file's mode.
enum class FileMode {
  Cache, // 0600; 0640 under a trusted group (its members read it)
  User,  // 0666 less the umask (a file the user asked for, e.g. popc's output)
};

/// Writes `size` bytes to `path` atomically: a temporary file `<path>.tmp.<pid>.<random>`
/// created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW: never a file or symbolic link planted at
/// its name), then renamed over `path` (which replaces a symbolic link there, never
/// following it). False with `why` on failure, leaving no temporary file.
bool writeAtomic(const std::string &path, const void *data, std::size_t size, FileMode mode,
                 std::string &why);

/// Creates a fresh directory `<parent>/<prefix>XXXXXX` (mkdtemp: exclusive, unpredictable,
/// mode 0700); empty if it could not be made.
std::string makeTempDirectory(const std::string &parent, const std::string &prefix);

/// Logs `message` as a warning the first time this process sees it.
void warnOnce(const std::string &message);

} // namespace aspen::cache

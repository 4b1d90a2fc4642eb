// Files that hold secrets, and the directory that holds the bill: the
// server's alone. A secret file another user can read (the internal token,
// a TLS private key) is refused rather than used, naming the fix; group
// read is allowed (Debian's ssl-cert group reads keys under /etc/ssl/private).
// Any thread; they only stat and chmod.
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/error.h"

namespace kvgate {

namespace private_file_detail {
inline std::string octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}
}  // namespace private_file_detail

// Throws kvgate::Error when `path` is readable by every user, or writable
// by anyone but its owner. A path that cannot be stat'ed passes: the
// caller's open reports it.
inline void require_private_file(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  if ((st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP)) == 0) return;
  throw Error(path + ": " + std::string(what) + " is open to other users (mode " +
              private_file_detail::octal(st.st_mode) + "); make it the owner's alone: chmod 600 " + path);
}

// Creates `dir` (and its parents) mode 0700, or narrows an existing one to
// 0700. Returns what it changed, for the start-up lines ("" when nothing).
inline std::string make_private_directory(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::exists(dir)) {
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
    return "";
  }
  const fs::perms was = fs::status(dir).permissions();
  if ((was & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none) return "";
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  return dir.string() + " was mode " + private_file_detail::octal(static_cast<mode_t>(was)) +
         ", open to other users: now 0700";
}

}  // namespace kvgate

// Copyright (c) Aspen contributors.
// A small stand-in for libFuzzer's main, linked with each harness when the build
// is not a clang libFuzzer build (docs/fuzzing.md): replays every seed, then runs
// a bounded number of simple random mutations of them (bit flips, interesting
// integers, byte insertions and deletions, splices). Deterministic for a seed.
// Any crash, sanitizer report or escaping exception fails the run.
//
// Usage: <harness> [-runs=N] [-seconds=S] [-seed=K] <file or directory>...
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void run(const Bytes &input) {
  // A copy of exactly the input's size, so that a sanitizer sees any over-read.
  std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[input.size() ? input.size() : 1]);
  if (!input.empty())
    std::memcpy(copy.get(), input.data(), input.size());
  LLVMFuzzerTestOneInput(copy.get(), input.size());
}

class Mutator {
public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  Bytes mutate(Bytes b, const std::vector<Bytes> &corpus) {
    const int n = 1 + static_cast<int>(below(8));
    for (int i = 0; i < n; ++i)
      once(b, corpus);
    return b;
  }

private:
  std::uint64_t below(std::uint64_t n) {
    return n ? std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_) : 0;
  }

  void once(Bytes &b, const std::vector<Bytes> &corpus) {
    static const std::uint64_t interesting[] = {0,
                                                1,
                                                2,
                                                7,
                                                8,
                                                0x7f,
                                                0x80,
                                                0xff,
                                                0x7fff,
                                                0xffff,
                                                0x7fffffff,
                                                0x80000000,
                                                0xffffffff,
                                                0x100000000ull,
                                                std::uint64_t(1) << 40,
                                                std::uint64_t(1) << 62,
                                                ~std::uint64_t(0),
                                                ~std::uint64_t(0) - 7};
    switch (below(b.empty() ? 1 : 7)) {
    case 0: { // insert random bytes
      const std::size_t at = below(b.size() + 1), n = 1 + below(16);
      for (std::size_t i = 0; i < n; ++i)
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(below(256)));
      break;
    }
    case 1: // flip a bit
      b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8));
      break;
    case 2: // a random byte
      b[below(b.size())] = static_cast<std::uint8_t>(below(256));
      break;
    case 3: { // an interesting 1-, 2-, 4- or 8-byte little-endian integer
      const std::size_t width = std::size_t(1) << below(4);
      if (b.size() < width)
        break;
      const std::uint64_t v = interesting[below(std::size(interesting))];
      std::memcpy(&b[below(b.size() - width + 1)], &v, width);
      break;
    }
    case 4: { // delete a range
      const std::size_t at = below(b.size()), n = 1 + below(std::min<std::size_t>(b.size() - at, 64));
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
      break;
    }
    case 5: { // duplicate a range in place
      const std::size_t at = below(b.size()), n = 1 + below(std::min<std::size_t>(b.size() - at, 64));
      const Bytes piece(b.begin() + static_cast<std::ptrdiff_t>(at),
                        b.begin() + static_cast<std::ptrdiff_t>(at + n));
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(below(b.size() + 1)), piece.begin(), piece.end());
      break;
    }
    default: { // splice: the tail of another corpus element
      const Bytes &other = corpus[below(corpus.size())];
      if (other.empty())
        break;
      const std::size_t at = below(b.size()), from = below(other.size());
      b.resize(at);
      b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
      break;
    }
    }
  }

  std::mt19937_64 rng_;
};

} // namespace

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::uint64_t runs = 10000, seed = 1;
  double seconds = 10;
  std::vector<Bytes> corpus;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-runs=", 0) == 0)
      runs = std::strtoull(arg.c_str() + 6, nullptr, 10);
    else if (arg.rfind("-seconds=", 0) == 0)
      seconds = std::strtod(arg.c_str() + 9, nullptr);
    else if (arg.rfind("-seed=", 0) == 0)
      seed = std::strtoull(arg.c_str() + 6, nullptr, 10);
    else if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> files;
      for (const auto &e : std::filesystem::directory_iterator(arg))
        if (e.is_regular_file())
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto &f : files)
        corpus.push_back(readFile(f));
    } else if (std::filesystem::is_regular_file(arg)) {
      corpus.push_back(readFile(arg));
    } else {
      std::fprintf(stderr, "%s: no such file or directory: %s\n", argv[0], arg.c_str());
      return 2;
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "usage: %s [-runs=N] [-seconds=S] [-seed=K] <seed file or directory>...\n", argv[0]);
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  for (const Bytes &input : corpus)
    run(input);
  run(Bytes());
  Mutator mutator(seed);
  std::uint64_t done = 0;
  for (; done < runs; ++done) {
    if ((done & 63) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds)
      break;
    run(mutator.mutate(corpus[done % corpus.size()], corpus));
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: replayed %zu seeds, ran %llu mutated inputs in %.1f s: no crash\n", argv[0], corpus.size(),
              static_cast<unsigned long long>(done), took);
  return 0;
}

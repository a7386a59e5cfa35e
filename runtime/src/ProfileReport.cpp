// Copyright (c) Aspen contributors.
#include "ProfileReport.hpp"

#include "HostClock.hpp"
#include "ReportFile.hpp"
#include "VisionHtml.hpp"
#include "poplar/Version.hpp"
#include "poplar/exceptions.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

namespace aspen::rt {

using nlohmann::json;

namespace {

std::string withCommas(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string fixed1(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  // Thousands separators in the integer part, as Poplar prints "1,330.0 MHz".
  std::string s = buffer;
  const auto dot = s.find('.');
  const bool negative = s[0] == '-';
  std::string integer = s.substr(negative ? 1 : 0, dot - (negative ? 1 : 0));
  return (negative ? "-" : "") + withCommas(std::stoull(integer)) + s.substr(dot);
}

std::string percent(std::uint64_t part, std::uint64_t total) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", total ? 100.0 * double(part) / double(total) : 0.0);
  return buffer;
}

std::string bytesText(std::uint64_t bytes) {
  if (bytes >= 1024ull * 1024)
    return withCommas(bytes) + " (" + fixed1(double(bytes) / (1024.0 * 1024.0)) + " MB)";
  if (bytes >= 1024)
    return withCommas(bytes) + " (" + fixed1(double(bytes) / 1024.0) + " KB)";
  return withCommas(bytes) + " B";
}

// The profile is data from the executable file: read it without trusting its
// shape (a wrong kind reads as absent, never as a JSON library exception).
std::uint64_t toUnsigned(const json &v, std::uint64_t otherwise) {
  if (v.is_number_unsigned())
    return v.get<std::uint64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return d >= 0 && d < 18446744073709551616.0 ? static_cast<std::uint64_t>(d) : otherwise;
  }
  return otherwise; // negative integers, strings, ...
}
std::uint64_t number(const json &j, const char *key, std::uint64_t otherwise = 0) {
  if (!j.is_object())
    return otherwise;
  auto it = j.find(key);
  return it != j.end() ? toUnsigned(*it, otherwise) : otherwise;
}
/// `j[key]` when it is an object, else an empty object.
json object(const json &j, const char *key) {
  if (!j.is_object())
    return json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : json::object();
}

/// "vertexFieldData" -> "Vertex Field Data": the compiler's category keys as Poplar prints them.
std::string titleCase(const std::string &key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (i == 0)
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else if (std::isupper(static_cast<unsigned char>(c)))
      out += std::string(" ") + c;
    else
      out += c;
  }
  return out;
}

void line(std::ostream &os, unsigned indent, const std::string &label, const std::string &value) {
  std::string left = std::string(indent, ' ') + label + ":";
  os << std::left << std::setw(48) << left << ' ' << value << '\n';
}

/// Per tile with vertices, the compute cycles of one execution of `cs`, by the
/// cost model's rule (docs/cost-model.md): worker vertices packed greedily onto
/// the least-loaded worker, max load x workers, plus MultiVertex vertices in turn.
std::vector<std::uint64_t> tileComputeCycles(const exe::ComputeStep &cs,
                                             const std::vector<exe::VertexTypeEntry> &types,
                                             unsigned workers) {
  std::vector<std::uint64_t> result(cs.tiles.size(), 0);
  std::vector<std::uint64_t> load(std::max(1u, workers));
  for (std::size_t k = 0; k < cs.tiles.size(); ++k) {
    std::fill(load.begin(), load.end(), 0);
    std::uint64_t multi = 0;
    for (std::uint32_t i = cs.tileBegin[k]; i < cs.tileBegin[k + 1]; ++i) {
      const exe::VertexInstance &v = cs.vertices[i];
      if (types[v.type].isMultiVertex)
        multi += v.cycles;
      else
        *std::min_element(load.begin(), load.end()) += v.cycles;
    }
    result[k] = *std::max_element(load.begin(), load.end()) * load.size() + multi;
  }
  return result;
}

/// Poplar's tile averages (docs/cost-model.md, "Tile averages"): each kind of cycle summed over
/// the tiles and divided by their number. A step lasts as long for every tile; a tile spends
/// its own compute and exchange cycles and waits the rest of the step at the sync (Poplar's
/// SyncType: each tile waits until all the others reach the sync), so a tile's sync includes
/// the wait for the slowest tile. In a host or Streaming Memory transfer the tiles with bytes
/// in it spend the step less its sync on the transfer; tiles without bytes wait.
struct TileAverages {
  double compute = 0, exchange = 0, hostExchange = 0, streamingMemory = 0, sync = 0, control = 0;
};

TileAverages tileAverages(const exe::ExecutableData &exe, const ExecutionProfile &profile) {
  TileAverages sum;
  const double tiles = std::max(1u, exe.target.numTiles());
  const std::uint64_t syncOnly = exe.target.syncCycles + exe.target.minIPUSyncDelay;
  // Tiles with bytes in a host or Streaming Memory transfer.
  auto transferTiles = [&](std::uint32_t transfer) -> double {
    if (transfer >= exe.hostTransfers.size())
      return 0;
    std::vector<std::uint32_t> with;
    for (const exe::HostRun &r : exe.hostTransfers[transfer].runs)
      with.push_back(r.device.tile);
    std::sort(with.begin(), with.end());
    return double(std::unique(with.begin(), with.end()) - with.begin());
  };
  for (std::size_t s = 0; s < profile.stepExecutions.size() && s < exe.steps.size(); ++s) {
    const std::uint64_t n = profile.stepExecutions[s];
    if (!n)
      continue;
    const exe::Step &step = exe.steps[s];
    const double all = tiles * double(profile.stepCycles[s]); // the step's cycles on every tile
    auto transfer = [&](double &kind, std::uint32_t index) {
      const double with = std::min(tiles, transferTiles(index));
      const double own = double(profile.stepCycles[s] - std::min(profile.stepCycles[s], n * syncOnly));
      kind += with * own;
      sum.sync += all - with * own;
    };
    switch (step.kind) {
    case exe::StepKind::Execute: {
      const exe::ComputeStep &cs = exe.computeSteps[step.a];
      double compute = 0;
      if (s < profile.stepTileCycles.size() && profile.stepTileCycles[s].size() == cs.tiles.size() &&
          !cs.tiles.empty()) {
        for (std::uint64_t c : profile.stepTileCycles[s])
          compute += double(c);
      } else {
        for (std::uint64_t c : tileComputeCycles(cs, exe.vertexTypes, exe.target.numWorkerContexts))
          compute += double(n) * double(c);
      }
      const double exchange = double(n) * double(cs.exchangeIn.tileCycles + cs.exchangeOut.tileCycles);
      sum.compute += compute;
      sum.exchange += exchange;
      sum.sync += std::max(0.0, all - compute - exchange);
      break;
    }
    case exe::StepKind::Copy: {
      const double exchange = std::min(all, double(n) * double(exe.copies[step.a].tileCycles));
      sum.exchange += exchange;
      sum.sync += all - exchange;
      break;
    }
    case exe::StepKind::StreamToDevice:
    case exe::StepKind::DeviceToStream:
      transfer(sum.hostExchange, step.b);
      break;
    case exe::StepKind::Print:
      transfer(sum.hostExchange, step.a < exe.prints.size() ? exe.prints[step.a].transfer : ~0u);
      break;
    case exe::StepKind::RemoteToDevice:
    case exe::StepKind::DeviceToRemote:
      transfer(sum.streamingMemory, step.b);
      break;
    case exe::StepKind::Collective:
      sum.exchange += all;
      break;
    case exe::StepKind::Sync:
      sum.sync += all;
      break;
    default:
      sum.control += all;
      break;
    }
  }
  return {sum.compute / tiles,         sum.exchange / tiles, sum.hostExchange / tiles,
          sum.streamingMemory / tiles, sum.sync / tiles,     sum.control / tiles};
}

} // namespace

namespace {
/// Whether JSON text nests arrays and objects more than `limit` deep (strings
/// skipped). nlohmann copies and prints values recursively, so a profile nested
/// a million deep would overflow the stack; no real profile is deeper than ~8.
bool nestsDeeperThan(const std::string &text, std::size_t limit) {
  std::size_t depth = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}
} // namespace

json compileProfile(const exe::ExecutableData &exe) {
  if (exe.profileJson.empty() || nestsDeeperThan(exe.profileJson, 64))
    return json::object();
  json j = json::parse(exe.profileJson, nullptr, false);
  return j.is_discarded() || !j.is_object() ? json::object() : j;
}

void printProfileSummary(std::ostream &os, const exe::ExecutableData &exe, const ExecutionProfile &profile,
                         const SummaryOptions &options) {
  const ir::TargetData &t = exe.target;
  const json compiled = compileProfile(exe);
  const json graph = object(compiled, "graph");
  const json memory = object(compiled, "memory");
  // The executable's target is one replica's (docs/replication.md).
  const unsigned replicas = std::max<std::uint32_t>(1, exe.replicationFactor);
  const std::uint64_t replicaMemory = t.bytesPerTile * t.numTiles();
  const std::uint64_t totalMemory = replicaMemory * replicas;

  os << "Target:\n";
  line(os, 2, "Number of IPUs", withCommas(std::uint64_t(t.numIPUs) * replicas));
  line(os, 2, "Tiles per IPU", withCommas(t.tilesPerIPU));
  line(os, 2, "Total Tiles", withCommas(std::uint64_t(t.numTiles()) * replicas));
  line(os, 2, "Memory Per-Tile", fixed1(double(t.bytesPerTile) / 1024.0) + " kB");
  line(os, 2, "Total Memory", fixed1(double(totalMemory) / (1024.0 * 1024.0)) + " MB");
  line(os, 2, "Clock Speed (approx)", fixed1(t.tileClockFrequency / 1e6) + " MHz");
  line(os, 2, "Number of Replicas", withCommas(replicas));
  line(os, 2, "IPUs per Replica", withCommas(t.numIPUs));
  line(os, 2, "Tiles per Replica", withCommas(t.numTiles()));
  line(os, 2, "Memory per Replica", fixed1(double(replicaMemory) / (1024.0 * 1024.0)) + " MB");
  os << '\n';

  std::uint64_t executedVertices = 0;
  for (const exe::ComputeStep &cs : exe.computeSteps)
    executedVertices += cs.vertices.size();
  os << "Graph:\n";
  line(os, 2, "Number of vertices", withCommas(number(graph, "numVertices", executedVertices)));
  line(os, 2, "Number of edges", withCommas(number(graph, "numEdges")));
  line(os, 2, "Number of variables", withCommas(number(graph, "numVariables")));
  line(os, 2, "Number of compute sets", withCommas(number(graph, "numComputeSets", exe.computeSteps.size())));
  os << '\n';

  // ---- memory -----------------------------------------------------------------------
  const unsigned numTiles = t.numTiles();
  std::vector<std::uint64_t> including(numTiles, 0), excluding(numTiles, 0);
  for (unsigned tile = 0; tile < numTiles && tile < exe.tileBytesUsed.size(); ++tile)
    including[tile] = exe.tileBytesUsed[tile];
  const json tilesJson = object(memory, "tiles");
  // Each byte of a tile's address space once, under one category (profiles from before
  // byCategoryNonOverlapped count shared bytes once per object: capped below).
  const json nonOverlappedPerTile = object(tilesJson, "byCategoryNonOverlapped");
  const bool nonOverlapped = !nonOverlappedPerTile.empty();
  const json byCategoryPerTile = nonOverlapped ? nonOverlappedPerTile : object(tilesJson, "byCategory");
  const std::uint64_t overhead = number(memory, "perTileOverheadBytes", 0);
  std::map<std::string, std::uint64_t> categoryTotals;
  for (auto it = byCategoryPerTile.begin(); it != byCategoryPerTile.end(); ++it) {
    if (!it->is_array())
      continue;
    std::uint64_t sum = 0;
    for (unsigned tile = 0; tile < numTiles && tile < it->size(); ++tile) {
      const std::uint64_t b = toUnsigned((*it)[tile], 0);
      excluding[tile] += b;
      sum += b;
    }
    categoryTotals[it.key()] = sum;
  }
  const bool haveCategories = !categoryTotals.empty();
  // Non-overlapped categories and the overhead are the tile's bytes excluding gaps, never
  // above its peak. Older profiles count a not-always-live variable in full although it shares
  // memory with others, so there the sum is capped by the tile's peak.
  for (unsigned tile = 0; tile < numTiles; ++tile)
    excluding[tile] =
        haveCategories ? std::min(excluding[tile] + overhead, including[tile]) : including[tile];
  std::uint64_t totalIncluding = 0, totalExcluding = 0;
  unsigned maxIncludingTile = 0, maxExcludingTile = 0, tilesOutOfMemory = 0;
  for (unsigned tile = 0; tile < numTiles; ++tile) {
    totalIncluding += including[tile];
    totalExcluding += excluding[tile];
    if (including[tile] > including[maxIncludingTile])
      maxIncludingTile = tile;
    if (excluding[tile] > excluding[maxExcludingTile])
      maxExcludingTile = tile;
    tilesOutOfMemory += including[tile] > t.bytesPerTile;
  }
  os << "Memory Usage:\n";
  os << "  Total:\n";
  line(os, 4, "Including Gaps", bytesText(totalIncluding));
  line(os, 4, "Excluding Gaps", bytesText(totalExcluding));
  if (haveCategories) {
    os << "    By Data Type:\n";
    for (const auto &[name, bytes] : categoryTotals)
      line(os, 6, titleCase(name), bytesText(bytes));
    line(os, 6, "Stack and Control Code", bytesText(overhead * numTiles));
  }
  os << "  By Tile (Excluding Gaps):\n";
  // A histogram of tile usage in buckets of 1/16 of a tile's memory.
  constexpr unsigned buckets = 16;
  std::vector<unsigned> histogram(buckets + 1, 0);
  const std::uint64_t bucketBytes = std::max<std::uint64_t>(1, (t.bytesPerTile + buckets - 1) / buckets);
  for (unsigned tile = 0; tile < numTiles; ++tile)
    ++histogram[std::min<std::uint64_t>(buckets, excluding[tile] / bucketBytes)];
  const unsigned most = numTiles ? *std::max_element(histogram.begin(), histogram.end()) : 0;
  os << "    Range (KB) Histogram (Excluding Gaps)               Count (tiles)\n";
  for (unsigned b = 0; b <= buckets; ++b) {
    if (histogram[b] == 0)
      continue;
    char range[64];
    if (b == buckets)
      std::snprintf(range, sizeof range, "%7.1f +      ", double(b * bucketBytes) / 1024.0);
    else
      std::snprintf(range, sizeof range, "%7.1f - %-7.1f", double(b * bucketBytes) / 1024.0,
                    double((b + 1) * bucketBytes) / 1024.0);
    const unsigned stars = most ? std::max(1u, histogram[b] * 40 / most) : 0;
    os << "    " << range << ' ' << std::left << std::setw(40) << std::string(stars, '*') << "  "
       << withCommas(histogram[b]) << '\n';
  }
  if (numTiles) {
    line(os, 4, "Maximum (Including Gaps)",
         bytesText(including[maxIncludingTile]) + " on tile " + std::to_string(maxIncludingTile));
    line(os, 4, "Maximum (Excluding Gaps)",
         bytesText(excluding[maxExcludingTile]) + " on tile " + std::to_string(maxExcludingTile));
  }
  os << "    " << withCommas(tilesOutOfMemory) << " tile(s) out of memory\n";
  if (exe.outOfMemory && !exe.outOfMemoryMessage.empty())
    os << "    " << exe.outOfMemoryMessage << '\n';

  // ---- execution --------------------------------------------------------------------
  if (profile.runs == 0)
    return;
  os << '\n' << "Execution:\n";
  os << "  Programs executed:\n";
  for (std::size_t p = 0; p < profile.runsPerProgram.size(); ++p)
    if (profile.runsPerProgram[p])
      os << "    " << p << ": " << withCommas(profile.runsPerProgram[p]) << " run(s)\n";
  const std::uint64_t total = profile.totalCycles;
  const double micros = t.tileClockFrequency > 0 ? double(total) / t.tileClockFrequency * 1e6 : 0.0;
  os << '\n';
  line(os, 2, "Total cycles", withCommas(total) + " (approx " + fixed1(micros) + " microseconds)");
  line(os, 2, "Tile compute cycles",
       withCommas(profile.computeCycles) + " (" + percent(profile.computeCycles, total) + ")");
  line(os, 2, "Tile IPU exchange cycles",
       withCommas(profile.exchangeCycles) + " (" + percent(profile.exchangeCycles, total) + ")");
  line(os, 2, "Tile host exchange cycles",
       withCommas(profile.hostExchangeCycles) + " (" + percent(profile.hostExchangeCycles, total) + ")");
  if (profile.streamingMemoryCycles)
    line(os, 2, "Streaming Memory cycles",
         withCommas(profile.streamingMemoryCycles) + " (" + percent(profile.streamingMemoryCycles, total) +
             ")");
  line(os, 2, "Tile sync cycles",
       withCommas(profile.syncCycles) + " (" + percent(profile.syncCycles, total) + ")");
  line(os, 2, "Control cycles",
       withCommas(profile.controlCycles) + " (" + percent(profile.controlCycles, total) + ")");
  // Poplar's per-tile view (docs/cost-model.md, "Tile averages"): a tile's sync includes its
  // wait for the slowest tile.
  const TileAverages average = tileAverages(exe, profile);
  auto averageLine = [&](const char *label, double cycles) {
    line(os, 2, label,
         fixed1(cycles) + " (" + fixed1(total ? 100.0 * cycles / double(total) : 0.0) + "% of total)");
  };
  averageLine("Tile average compute cycles", average.compute);
  averageLine("Tile average IPU exchange cycles", average.exchange);
  averageLine("Tile average host exchange cycles", average.hostExchange);
  if (average.streamingMemory > 0)
    averageLine("Tile average Streaming Memory cycles", average.streamingMemory);
  averageLine("Tile average sync cycles", average.sync);
  // Aspen's own line (Poplar prints none): with it the printed averages add up to the total.
  averageLine("Tile average control cycles", average.control);
  line(os, 2, "Launch cycles (Engine::run)",
       withCommas(profile.launchCycles) + " (" + withCommas(profile.runs) + " run(s), not in the total)");
  char wall[96];
  if (profile.hostComputeTimes)
    std::snprintf(wall, sizeof wall, "%.3f ms (of which compute sets %.3f ms)",
                  hostclock::seconds(profile.hostTicks) * 1e3,
                  hostclock::seconds(profile.hostComputeTicks) * 1e3);
  else // compute sets timed only under aspen.profileHostComputeTime (docs/profiling.md)
    std::snprintf(wall, sizeof wall, "%.3f ms", hostclock::seconds(profile.hostTicks) * 1e3);
  line(os, 2, "Host time simulating", wall);
  os << '\n' << "  Cycles by vertex type:\n";
  std::vector<std::size_t> order;
  for (std::size_t v = 0; v < profile.vertexTypeCycles.size(); ++v)
    if (profile.vertexTypeInstances[v])
      order.push_back(v);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return profile.vertexTypeCycles[a] > profile.vertexTypeCycles[b];
  });
  // How the cycles were priced (docs/cost-model.md): "counted" from the code the vertices ran,
  // "not counted" when their code could not count them (the default estimate instead).
  auto countedOf = [&](std::size_t v) {
    return v < profile.vertexTypeCounted.size() ? profile.vertexTypeCounted[v] : 0;
  };
  auto notCountedOf = [&](std::size_t v) {
    return v < profile.vertexTypeNotCounted.size() ? profile.vertexTypeNotCounted[v] : 0;
  };
  for (std::size_t v : order) {
    std::string how;
    if (countedOf(v))
      how = countedOf(v) == profile.vertexTypeInstances[v] ? ", counted"
                                                           : ", " + withCommas(countedOf(v)) + " counted";
    if (notCountedOf(v))
      how += ", " + withCommas(notCountedOf(v)) + " NOT counted (default estimate)";
    line(os, 4,
         exe.vertexTypes[v].name + " (" + withCommas(profile.vertexTypeInstances[v]) + " instances" + how +
             ")",
         withCommas(profile.vertexTypeCycles[v]));
  }

  if (options.showExecutionSteps) {
    os << '\n' << "  Execution steps:\n";
    unsigned depth = 0;
    std::uint32_t run = ~0u;
    profile.trace.forEach([&](const TraceEntry &e) {
      if (e.run != run) {
        run = e.run;
        depth = 0;
        os << "    Run " << run << ":\n";
      }
      const exe::Step &step = exe.steps[e.step];
      if (step.kind == exe::StepKind::BlockEnd && depth)
        --depth;
      std::string name = exe::stepKindName(step.kind);
      if (step.kind == exe::StepKind::BlockBegin && step.a < exe.blockNames.size())
        name += " " + exe.blockNames[step.a];
      else if (!step.message.empty())
        name += " " + step.message;
      os << "      " << std::right << std::setw(7) << e.step << "  " << std::left << std::setw(44)
         << (std::string(2 * depth, ' ') + name) << ' ' << std::right << std::setw(12) << withCommas(e.cycles)
         << " cycles  (start " << withCommas(e.startCycle) << ")\n";
      if (step.kind == exe::StepKind::BlockBegin)
        ++depth;
    });
    if (profile.traceDropped)
      os << "      ... " << withCommas(profile.traceDropped) << " more steps not recorded\n";
  }
}

json profileJson(const exe::ExecutableData &exe, const ExecutionProfile &profile, bool includeGraph,
                 bool includeExecution) {
  json out = includeGraph ? compileProfile(exe) : json::object();
  if (includeGraph) {
    // Per compute set, what libpva's ComputeSet views read (docs/profile-format.md): its
    // vertices by type and the estimated compute cycles of each tile it runs on.
    auto css = out.find("computeSets");
    if (css != out.end() && css->is_array())
      for (std::size_t c = 0; c < exe.computeSteps.size() && c < css->size(); ++c) {
        const exe::ComputeStep &cs = exe.computeSteps[c];
        std::map<std::uint32_t, std::uint64_t> perType;
        for (const exe::VertexInstance &v : cs.vertices)
          ++perType[v.type];
        std::vector<std::uint64_t> flat;
        flat.reserve(2 * perType.size());
        for (const auto &entry : perType) {
          flat.push_back(entry.first);
          flat.push_back(entry.second);
        }
        json &j = (*css)[c];
        j["vertexTypeCounts"] = std::move(flat);
        j["tileList"] = cs.tiles;
        j["tileEstimatedCycles"] = tileComputeCycles(cs, exe.vertexTypes, exe.target.numWorkerContexts);
      }
  }
  out["format"] = "aspen-profile";
  out["version"] = profile::kReportVersion;
  out["poplarVersion"] = poplar::versionString();
  if (!includeExecution)
    return out;
  json x;
  x["runs"] = profile.runs;
  x["runsPerProgram"] = profile.runsPerProgram;
  x["totalCycles"] = profile.totalCycles;
  x["launchCycles"] = profile.launchCycles;
  x["cycles"] = {{"compute", profile.computeCycles},
                 {"exchange", profile.exchangeCycles},
                 {"hostExchange", profile.hostExchangeCycles},
                 {"streamingMemory", profile.streamingMemoryCycles},
                 {"sync", profile.syncCycles},
                 {"control", profile.controlCycles}};
  const TileAverages average = tileAverages(exe, profile);
  x["tileAverageCycles"] = {{"compute", average.compute},
                            {"exchange", average.exchange},
                            {"hostExchange", average.hostExchange},
                            {"streamingMemory", average.streamingMemory},
                            {"sync", average.sync},
                            {"control", average.control}};
  x["hostSeconds"] = hostclock::seconds(profile.hostTicks);
  if (profile.hostComputeTimes) // measured only under aspen.profileHostComputeTime
    x["hostComputeSeconds"] = hostclock::seconds(profile.hostComputeTicks);
  json types = json::array();
  for (std::size_t v = 0; v < exe.vertexTypes.size() && v < profile.vertexTypeCycles.size(); ++v)
    types.push_back(
        {{"name", exe.vertexTypes[v].name},
         {"instancesExecuted", profile.vertexTypeInstances[v]},
         {"cycles", profile.vertexTypeCycles[v]},
         {"instancesCounted", v < profile.vertexTypeCounted.size() ? profile.vertexTypeCounted[v] : 0},
         {"instancesNotCounted",
          v < profile.vertexTypeNotCounted.size() ? profile.vertexTypeNotCounted[v] : 0}});
  x["vertexTypes"] = std::move(types);

  // Executed steps, each with its per-tile cycles.
  json steps = json::array();
  const unsigned workers = exe.target.numWorkerContexts;
  for (std::size_t s = 0; s < profile.stepExecutions.size(); ++s) {
    if (!profile.stepExecutions[s])
      continue;
    const exe::Step &step = exe.steps[s];
    json j = {{"step", s},
              {"kind", exe::stepKindName(step.kind)},
              {"name", step.kind == exe::StepKind::BlockBegin && step.a < exe.blockNames.size()
                           ? exe.blockNames[step.a]
                           : step.message},
              {"executions", profile.stepExecutions[s]},
              {"cycles", profile.stepCycles[s]}};
    if (step.kind == exe::StepKind::Execute) {
      const exe::ComputeStep &cs = exe.computeSteps[step.a];
      j["tiles"] = cs.tiles;
      // A step with counted vertices (docs/cost-model.md, "Cycles from the code"): each tile's
      // cycles as the run counted them, the mean of the step's executions (rounded to nearest);
      // otherwise the static estimate of one execution.
      const std::vector<std::uint64_t> *counted =
          s < profile.stepTileCycles.size() && profile.stepTileCycles[s].size() == cs.tiles.size() &&
                  !cs.tiles.empty()
              ? &profile.stepTileCycles[s]
              : nullptr;
      if (counted) {
        const std::uint64_t n = profile.stepExecutions[s];
        std::vector<std::uint64_t> mean(counted->size());
        for (std::size_t k = 0; k < mean.size(); ++k)
          mean[k] = (*counted)[k] / n + ((*counted)[k] % n >= n - n / 2 ? 1 : 0);
        j["tileComputeCycles"] = std::move(mean);
        j["tileComputeCyclesCounted"] = true;
      } else {
        j["tileComputeCycles"] = tileComputeCycles(cs, exe.vertexTypes, workers);
      }
    } else if (step.kind == exe::StepKind::Copy) {
      const exe::CopyPlan &plan = exe.copies[step.a];
      std::vector<std::uint64_t> cycles;
      const unsigned perCycle = std::max(1u, exe.target.exchangeBytesPerCycle);
      for (std::size_t k = 0; k < plan.tiles.size(); ++k) {
        std::uint64_t bytes = 0;
        for (std::uint32_t r = plan.tileBegin[k]; r < plan.tileBegin[k + 1]; ++r)
          bytes += plan.runs[r].bytes;
        cycles.push_back((bytes + perCycle - 1) / perCycle);
      }
      j["tiles"] = plan.tiles;
      j["tileExchangeCycles"] = cycles;
    } else if ((step.kind == exe::StepKind::StreamToDevice || step.kind == exe::StepKind::DeviceToStream) &&
               step.b < exe.hostTransfers.size()) {
      // The tiles the stream copy writes or reads: where lightweight profiling sees it.
      std::vector<std::uint32_t> tiles;
      for (const exe::HostRun &run : exe.hostTransfers[step.b].runs)
        tiles.push_back(run.device.tile);
      std::sort(tiles.begin(), tiles.end());
      tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
      j["tiles"] = std::move(tiles);
    }
    steps.push_back(std::move(j));
  }
  x["steps"] = std::move(steps);
  json trace = json::array();
  profile.trace.forEach([&](const TraceEntry &e) {
    trace.push_back({e.step, e.run, e.startCycle, e.cycles});
  });
  x["trace"] = std::move(trace);
  x["traceDropped"] = profile.traceDropped;
  x["blocks"] = {{"filter", profile.blocks.filter},
                 {"programsFilter", profile.blocks.programsFilter},
                 {"tile", profile.blocks.tile},
                 {"streamCopies", profile.blocks.streamCopies}};
  out["execution"] = std::move(x);
  return out;
}

// ---- Poplar 1.x profile values (Engine::getGraphProfile / getExecutionProfile) ----------

namespace {

poplar::ProfileValue toProfileValue(const json &j) {
  switch (j.type()) {
  case json::value_t::boolean:
    return poplar::ProfileValue(j.get<bool>());
  case json::value_t::number_integer:
    return poplar::ProfileValue(j.get<std::int64_t>());
  case json::value_t::number_unsigned:
    return poplar::ProfileValue(j.get<std::uint64_t>());
  case json::value_t::number_float:
    return poplar::ProfileValue(j.get<double>());
  case json::value_t::string:
    return poplar::ProfileValue(j.get<std::string>());
  case json::value_t::array: {
    poplar::ProfileValue::Vector v;
    v.reserve(j.size());
    for (const json &e : j)
      v.push_back(toProfileValue(e));
    return poplar::ProfileValue(v);
  }
  case json::value_t::object: {
    poplar::ProfileValue::Map m;
    for (const auto &[k, e] : j.items())
      m.emplace(k, toProfileValue(e));
    return poplar::ProfileValue(m);
  }
  default:
    return poplar::ProfileValue(poplar::ProfileValue::Map{});
  }
}

/// Poplar 1.x's name of a step type in "simulation"/"steps".
const char *legacyStepType(const std::string &kind) {
  if (kind == "Execute")
    return "OnTileExecute";
  if (kind == "Copy")
    return "DoExchange";
  if (kind == "StreamToDevice" || kind == "DeviceToStream" || kind == "RemoteToDevice" ||
      kind == "DeviceToRemote")
    return "StreamCopy";
  if (kind == "Collective")
    return "GlobalExchange";
  if (kind == "Sync")
    return "Sync";
  return nullptr;
}

} // namespace

poplar::ProfileValue legacyGraphProfile(const json &report) {
  const json &target = report.value("target", json::object());
  const json &graph = report.value("graph", json::object());
  const json &memory = report.value("memory", json::object());
  const json &tiles = memory.value("tiles", json::object());
  json out;
  out["target"] = {{"type", target.value("type", "")},
                   {"arch", target.value("arch", "")},
                   {"numIPUs", target.value("numIPUs", 0)},
                   {"tilesPerIPU", target.value("tilesPerIPU", 0)},
                   {"numTiles", target.value("numTiles", 0)},
                   {"bytesPerTile", target.value("bytesPerTile", 0)},
                   {"clockFrequency", target.value("tileClockFrequency", 0.0)},
                   {"replicationFactor", target.value("replicationFactor", 1)}};
  out["graph"] = graph;
  // Per tile: "total" = always-live bytes + the peak of not-always-live bytes,
  // "totalIncludingGaps" = the highest byte used.
  const std::vector<std::uint64_t> always = tiles.value("alwaysLiveBytes", std::vector<std::uint64_t>{});
  const std::vector<std::uint64_t> notAlways =
      tiles.value("notAlwaysLivePeakBytes", std::vector<std::uint64_t>{});
  std::vector<std::uint64_t> total(always.size());
  for (std::size_t t = 0; t < always.size(); ++t)
    total[t] = always[t] + (t < notAlways.size() ? notAlways[t] : 0);
  std::uint64_t alwaysSum = 0;
  for (std::uint64_t b : always)
    alwaysSum += b;
  std::vector<std::uint64_t> perStep;
  for (const json &s : report.value("steps", json::array()))
    perStep.push_back(s.value("notAlwaysLiveBytes", std::uint64_t(0)));
  std::uint64_t maxNotAlways = 0;
  for (std::uint64_t b : perStep)
    maxNotAlways = std::max(maxNotAlways, b);
  out["memory"] = {
      {"byTile",
       {{"total", total}, {"totalIncludingGaps", tiles.value("peakBytes", std::vector<std::uint64_t>{})}}},
      {"byCategory", memory.value("byCategory", json::object())},
      {"liveness",
       {{"alwaysLive", {{"bytes", alwaysSum}}},
        {"notAlwaysLive", {{"bytes", perStep}, {"maxBytes", maxNotAlways}}}}},
      {"outOfMemory", memory.value("outOfMemory", false)}};
  std::vector<std::string> csNames;
  for (const json &cs : report.value("computeSets", json::array()))
    csNames.push_back(cs.value("name", ""));
  std::vector<std::string> vtNames;
  for (const json &vt : report.value("vertexTypes", json::array()))
    vtNames.push_back(vt.value("name", ""));
  out["computeSets"] = {{"names", csNames}};
  out["vertexTypes"] = {{"names", vtNames}};
  return toProfileValue(out);
}

poplar::ProfileValue legacyExecutionProfile(const json &report) {
  const json &x = report.value("execution", json::object());
  const json &compiled = report.value("steps", json::array());
  json steps = json::array();
  for (const json &e : x.value("trace", json::array())) {
    if (!e.is_array() || e.size() < 4)
      continue;
    const std::size_t s = e[0].get<std::size_t>();
    const json &step = s < compiled.size() ? compiled[s] : json::object();
    const std::string kind = step.value("kind", "");
    const char *type = legacyStepType(kind);
    if (!type)
      continue; // control flow: not a step of Poplar 1.x's simulation
    json j = {{"type", type}, {"name", step.value("name", "")}, {"cycles", e[3]}, {"run", e[1]}};
    if (step.contains("debugId"))
      j["debugId"] = step["debugId"];
    steps.push_back(std::move(j));
  }
  json out;
  out["simulation"] = {{"cycles", x.value("totalCycles", std::uint64_t(0))},
                       {"steps", std::move(steps)},
                       {"stepsDropped", x.value("traceDropped", std::uint64_t(0))}};
  out["runs"] = x.value("runs", std::uint64_t(0));
  out["cycles"] = x.value("cycles", json::object());
  return toProfileValue(out);
}

void writeProfile(const std::string &directory, const exe::ExecutableData &exe,
                  const ExecutionProfile &profile, bool includeGraph, bool includeExecution, bool html,
                  bool debugInfo) {
  const json report = profileJson(exe, profile, includeGraph, includeExecution);
  const std::string dir = directory.empty() ? std::string(".") : directory;
  try {
    profile::writeReportFiles(dir, report, /*pop=*/true);
    if (html)
      profile::writeVisionHtml(dir, report);
    if (debugInfo) {
      // The records as the DebugInfo streamer writes them: values beside id, layer and path.
      json contexts = json::array();
      for (const json &d : compileProfile(exe).value("debugContexts", json::array())) {
        json c = d.value("values", json::object());
        if (!c.is_object())
          c = json::object();
        for (const char *key : {"id", "parent", "layer", "path", "location"})
          if (d.contains(key))
            c[key] = d[key];
        contexts.push_back(std::move(c));
      }
      const std::vector<std::uint8_t> cbor = json::to_cbor(json{{"contexts", std::move(contexts)}});
      profile::writeFileAtomically(dir + "/debug.cbor", std::string(cbor.begin(), cbor.end()));
    }
  } catch (const poplar::poplar_error &e) {
    throw poplar::poplar_error(std::string("Cannot write the profile report in '") + dir + "': " + e.what());
  }
}

} // namespace aspen::rt

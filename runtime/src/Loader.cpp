// Copyright (c) Aspen contributors.
#include "Loader.hpp"

#include "DeviceScalar.hpp"
#include "codelets/VertexLibrary.hpp"
#include "poplar/exceptions.hpp"

#include <cstring>
#include <string>

namespace aspen::rt {

namespace {

using exe::StepKind;

/// Collects the checks of one executable; the first failure throws.
class Checker {
public:
  explicit Checker(const exe::ExecutableData &exe)
      : exe_(exe), numTiles_(exe.target.numTiles()), bytesPerTile_(exe.target.bytesPerTile) {}

  void require(bool ok, const std::string &what) const {
    if (!ok)
      throw poplar::graph_object_load_error("Corrupt executable: " + what);
  }
  void location(exe::TileAddr where, std::uint64_t bytes, const std::string &what) const {
    require(where.tile < numTiles_ && std::uint64_t(where.addr) + bytes <= bytesPerTile_,
            what + " (tile " + std::to_string(where.tile) + ", address " + std::to_string(where.addr) + ", " +
                std::to_string(bytes) + " bytes) lies outside tile memory");
  }
  void scalar(const exe::ScalarRef &s, const std::string &what) const {
    require(s.type != poplar::Type::Id::Invalid, what + " has no type");
    location(s.where, deviceTypeSize(s.type), what);
  }
  void index(std::size_t i, std::size_t size, const std::string &what) const {
    require(i < size,
            what + " index " + std::to_string(i) + " is out of range (" + std::to_string(size) + ")");
  }
  void plan(const exe::CopyPlan &p, const std::string &what) const {
    if (p.runs.empty() && p.tiles.empty() && p.tileBegin.size() <= 1)
      return; // an empty plan may leave its tile table empty
    require(p.tileBegin.size() == p.tiles.size() + 1, what + ": tile table size");
    require(p.tiles.empty() || (p.tileBegin.front() == 0 && p.tileBegin.back() == p.runs.size()),
            what + ": tile table does not cover its runs");
    for (std::size_t k = 0; k < p.tiles.size(); ++k) {
      require(p.tileBegin[k] <= p.tileBegin[k + 1], what + ": tile table not ascending");
      require(k == 0 || p.tiles[k - 1] < p.tiles[k], what + ": destination tiles not ascending");
      for (std::uint32_t r = p.tileBegin[k]; r < p.tileBegin[k + 1]; ++r) {
        const exe::CopyRun &run = p.runs[r];
        require(run.dst.tile == p.tiles[k], what + ": a run is listed under the wrong destination tile");
        location(run.src, run.bytes, what + " source");
        location(run.dst, run.bytes, what + " destination");
      }
    }
    require(!p.tiles.empty() || p.runs.empty(), what + ": runs without destination tiles");
  }
  void transfer(std::uint32_t t, const std::string &what) const {
    index(t, exe_.hostTransfers.size(), what + " host transfer");
    const exe::HostTransfer &h = exe_.hostTransfers[t];
    for (const exe::HostRun &run : h.runs) {
      require(run.hostOffset + run.bytes <= h.bytes, what + ": a run lies outside the host buffer");
      location(run.device, run.bytes, what);
    }
  }

  void all() const {
    require(numTiles_ > 0, "the target has no tiles");
    require(bytesPerTile_ <= (std::uint64_t(1) << 32), "tile memory larger than 32-bit addresses");
    // An engine with no programs (`Engine(graph, {})`) has no steps; any other
    // step list must end in a way that cannot run off its end.
    require(!exe_.steps.empty() || exe_.programEntry.empty(), "programs but no steps");
    if (!exe_.steps.empty()) {
      const StepKind last = exe_.steps.back().kind;
      require(last == StepKind::End || last == StepKind::Jump || last == StepKind::Return ||
                  last == StepKind::Abort,
              "the step list does not end with an End, Jump, Return or Abort step");
    }
    for (std::size_t p = 0; p < exe_.programEntry.size(); ++p)
      index(exe_.programEntry[p], exe_.steps.size(), "program " + std::to_string(p) + " entry step");
    for (std::size_t i = 0; i < exe_.steps.size(); ++i)
      step(i, exe_.steps[i]);
    for (std::size_t c = 0; c < exe_.computeSteps.size(); ++c)
      computeStep(exe_.computeSteps[c], "compute set '" + exe_.computeSteps[c].name + "'");
    for (std::size_t c = 0; c < exe_.copies.size(); ++c)
      plan(exe_.copies[c], "copy " + std::to_string(c));
    for (std::size_t s = 0; s < exe_.switchTables.size(); ++s) {
      const exe::SwitchTable &t = exe_.switchTables[s];
      const std::string what = "switch " + std::to_string(s);
      scalar(t.control, what + " control");
      require(t.values.size() == t.targets.size(), what + ": one target per case value");
      for (std::uint32_t target : t.targets)
        index(target, exe_.steps.size(), what + " target");
      index(t.defaultTarget, exe_.steps.size(), what + " default target");
    }
    for (std::size_t p = 0; p < exe_.prints.size(); ++p) {
      const exe::PrintSpec &spec = exe_.prints[p];
      transfer(spec.transfer, "print '" + spec.title + "'");
      std::uint64_t elements = 1;
      for (std::uint64_t d : spec.shape)
        elements *= d;
      require(elements * deviceTypeSize(spec.type) == exe_.hostTransfers[spec.transfer].bytes,
              "print '" + spec.title + "': size does not match its shape");
    }
    for (const exe::HostHandleInfo &h : exe_.hostHandles)
      transfer(h.transfer, "host handle '" + h.name + "'");
    for (const exe::MemoryBlob &b : exe_.blobs)
      location(b.where, b.bytes.size(), "initial data");
    for (const exe::Relocation &r : exe_.relocations) {
      location(r.where, 8, "relocation");
      location(r.target, 0, "relocation target");
    }
    for (const exe::VertexTypeEntry &t : exe_.vertexTypes)
      index(t.library, exe_.codeletLibraries.size(), "vertex type '" + t.name + "' library");
  }

private:
  void step(std::size_t i, const exe::Step &s) const {
    const std::string what = "step " + std::to_string(i);
    switch (s.kind) {
    case StepKind::Execute:
      index(s.a, exe_.computeSteps.size(), what + " compute set");
      if (s.scalar.type != poplar::Type::Id::Invalid)
        scalar(s.scalar, what + " failure flag");
      break;
    case StepKind::Copy:
      index(s.a, exe_.copies.size(), what + " copy");
      break;
    case StepKind::StreamToDevice:
    case StepKind::DeviceToStream: {
      index(s.a, exe_.streams.size(), what + " stream");
      transfer(s.b, what);
      const exe::StreamInfo &stream = exe_.streams[s.a];
      require(exe_.hostTransfers[s.b].bytes <= stream.numElements * deviceTypeSize(stream.type),
              what + ": copy larger than stream '" + stream.handle + "'");
      break;
    }
    case StepKind::RemoteToDevice:
    case StepKind::DeviceToRemote:
      index(s.a, exe_.remoteBuffers.size(), what + " remote buffer");
      transfer(s.b, what);
      if (s.scalar.type != poplar::Type::Id::Invalid)
        scalar(s.scalar, what + " offset");
      break;
    case StepKind::SetCounter:
    case StepKind::LoopTest:
      index(s.a, exe_.numCounters, what + " counter");
      index(s.target, exe_.steps.size(), what + " target");
      break;
    case StepKind::JumpIfZero:
    case StepKind::JumpIfNonZero:
      scalar(s.scalar, what + " condition");
      index(s.target, exe_.steps.size(), what + " target");
      break;
    case StepKind::Jump:
    case StepKind::Call:
      index(s.target, exe_.steps.size(), what + " target");
      break;
    case StepKind::SwitchJump:
      index(s.a, exe_.switchTables.size(), what + " switch table");
      break;
    case StepKind::Print:
      index(s.a, exe_.prints.size(), what + " print");
      break;
    case StepKind::AbortIf:
      scalar(s.scalar, what + " condition");
      break;
    case StepKind::BlockBegin:
      index(s.a, exe_.blockNames.size(), what + " block name");
      break;
    case StepKind::Return:
    case StepKind::Abort:
    case StepKind::Sync:
    case StepKind::WriteUndef:
    case StepKind::BlockEnd:
    case StepKind::End:
      break;
    default:
      require(false, what + " has an unknown kind " + std::to_string(static_cast<int>(s.kind)));
    }
  }

  void computeStep(const exe::ComputeStep &cs, const std::string &what) const {
    const bool empty = cs.vertices.empty() && cs.tiles.empty() && cs.tileBegin.size() <= 1;
    require(empty || cs.tileBegin.size() == cs.tiles.size() + 1, what + ": tile table size");
    require(empty || (cs.tileBegin.front() == 0 && cs.tileBegin.back() == cs.vertices.size()),
            what + ": tile table does not cover its vertices");
    for (std::size_t k = 0; k < cs.tiles.size(); ++k) {
      require(cs.tiles[k] < numTiles_, what + ": tile " + std::to_string(cs.tiles[k]) + " out of range");
      require(k == 0 || cs.tiles[k - 1] < cs.tiles[k], what + ": tiles not ascending");
      require(cs.tileBegin[k] <= cs.tileBegin[k + 1], what + ": tile table not ascending");
    }
    for (const exe::VertexInstance &v : cs.vertices) {
      index(v.type, exe_.vertexTypes.size(), what + " vertex type");
      require(v.state < bytesPerTile_, what + ": vertex state outside tile memory");
    }
    plan(cs.exchangeIn, what + " exchange in");
    plan(cs.exchangeOut, what + " exchange out");
  }

  const exe::ExecutableData &exe_;
  unsigned numTiles_;
  std::uint64_t bytesPerTile_;
};

} // namespace

void validateExecutable(const exe::ExecutableData &exe) {
  Checker(exe).all();
}

void loadMemoryImage(const exe::ExecutableData &exe, TileMemory &memory, bool poison) {
  memory.clear();
  if (poison)
    memory.poison(exe.tileBytesUsed);
  for (const exe::MemoryBlob &blob : exe.blobs)
    if (!blob.bytes.empty())
      std::memcpy(memory.at(blob.where), blob.bytes.data(), blob.bytes.size());
  for (const exe::Relocation &r : exe.relocations) {
    const auto address = reinterpret_cast<std::uintptr_t>(memory.at(r.target));
    const std::uint64_t value = address;
    std::memcpy(memory.at(r.where), &value, sizeof value);
  }
}

std::vector<VertexCode> loadVertexCode(const exe::ExecutableData &exe, VertexLibraries &libraries) {
  libraries.assign(exe.codeletLibraries.size(), nullptr);
  std::vector<VertexCode> code(exe.vertexTypes.size());
  std::vector<std::uint32_t> objectSize(exe.vertexTypes.size(), 0);
  for (std::size_t t = 0; t < exe.vertexTypes.size(); ++t) {
    const exe::VertexTypeEntry &type = exe.vertexTypes[t];
    const exe::CodeletLibraryBlob &blob = exe.codeletLibraries.at(type.library);
    const codelets::LoadedVertexLibrary *&library = libraries[type.library];
    if (!library)
      library = &codelets::loadVertexLibrary(blob.contentHash, blob.bytes,
                                             "vertex library " + blob.contentHash + " of the executable");
    const AspenVertexEntry *entry = library->find(type.name);
    if (!entry || !entry->compute)
      throw poplar::graph_object_load_error("Vertex type '" + type.name + "' is not in its vertex library (" +
                                            library->path() + ")");
    code[t] =
        VertexCode{entry->compute, (entry->flags & (ASPEN_VERTEX_MULTI | ASPEN_VERTEX_SUPERVISOR)) != 0};
    if (code[t].isMultiVertex != type.isMultiVertex)
      throw poplar::graph_object_load_error("Vertex type '" + type.name +
                                            "' is a MultiVertex in one of its library and the executable "
                                            "but not the other: the library changed after compilation");
    objectSize[t] = entry->size;
  }
  // Now that object sizes are known: every vertex object lies in its tile.
  for (const exe::ComputeStep &cs : exe.computeSteps)
    for (const exe::VertexInstance &v : cs.vertices)
      if (std::uint64_t(v.state) + objectSize[v.type] > exe.target.bytesPerTile)
        throw poplar::graph_object_load_error("Corrupt executable: a '" + exe.vertexTypes[v.type].name +
                                              "' vertex of compute set '" + cs.name +
                                              "' lies outside tile memory");
  return code;
}

namespace {
void writeToSink(void *context, const char *text, std::size_t length) {
  auto *sink = static_cast<PrintSink *>(context);
  std::lock_guard<std::mutex> lock(sink->mutex);
  sink->stream->write(text, static_cast<std::streamsize>(length));
  sink->stream->flush();
}
} // namespace

void setPrintSink(const VertexLibraries &libraries, PrintSink *sink) {
  for (const codelets::LoadedVertexLibrary *library : libraries)
    if (library)
      library->setPrintSink(sink ? writeToSink : nullptr, sink);
}

} // namespace aspen::rt

// Copyright (c) Aspen contributors.
// Front-end API that programs and operator libraries written for Poplar 3.x
// use beyond the core graph calls: debug information (DebugInfo, ProfileValue),
// scalar connections, constant queries, and small Tensor/Graph/Target queries.
#include "ir/DebugRecord.hpp"
#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/DebugContext.hpp"
#include "poplar/Graph.hpp"
#include "poplar/OptionFlags.hpp"
#include "poplar/ProfileValue.hpp"
#include "poplar/Target.hpp"
#include "poplar/Tensor.hpp"
#include "poplar/exceptions.hpp"
#include "util/HostConvert.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace poplar {

using aspen::ir::GraphData;
using aspen::ir::Segment;
using aspen::ir::VarId;

// ---- ProfileValue ----------------------------------------------------------------------

namespace {

const char *typeName(ProfileValue::Type t) {
  switch (t) {
  case ProfileValue::Type::BOOL_:
    return "Boolean";
  case ProfileValue::Type::STRING:
    return "String";
  case ProfileValue::Type::NUMBER:
    return "Number";
  case ProfileValue::Type::VECTOR:
    return "Vector";
  case ProfileValue::Type::MAP:
    return "Map";
  }
  return "?";
}

void requireType(const ProfileValue &v, ProfileValue::Type want, const char *what) {
  if (v.type() != want)
    throw poplar_error(std::string("ProfileValue::") + what + ": the value is a " + typeName(v.type()) +
                       ", not a " + typeName(want));
}

nlohmann::json toJson(const ProfileValue &v) {
  switch (v.type()) {
  case ProfileValue::Type::BOOL_:
    return v.asBool();
  case ProfileValue::Type::STRING:
    return v.asString();
  case ProfileValue::Type::NUMBER: {
    const double d = v.asDouble();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
      return d < 0 ? nlohmann::json(static_cast<std::int64_t>(d))
                   : nlohmann::json(static_cast<std::uint64_t>(d));
    return d;
  }
  case ProfileValue::Type::VECTOR: {
    nlohmann::json out = nlohmann::json::array();
    for (const ProfileValue &e : v.asVector())
      out.push_back(toJson(e));
    return out;
  }
  case ProfileValue::Type::MAP: {
    nlohmann::json out = nlohmann::json::object();
    for (const auto &kv : v.asMap())
      out[kv.first] = toJson(kv.second);
    return out;
  }
  }
  return nullptr;
}

} // namespace

bool ProfileValue::asBool() const {
  requireType(*this, Type::BOOL_, "asBool");
  return bool_;
}
double ProfileValue::asDouble() const {
  requireType(*this, Type::NUMBER, "asDouble");
  return number_;
}
std::int64_t ProfileValue::asInt() const {
  requireType(*this, Type::NUMBER, "asInt");
  return static_cast<std::int64_t>(number_);
}
std::uint64_t ProfileValue::asUint() const {
  requireType(*this, Type::NUMBER, "asUint");
  if (number_ < 0)
    throw poplar_error("ProfileValue::asUint: the value " + std::to_string(number_) + " is negative");
  return static_cast<std::uint64_t>(number_);
}
const std::string &ProfileValue::asString() const {
  requireType(*this, Type::STRING, "asString");
  return string_;
}
const ProfileValue::Vector &ProfileValue::asVector() const {
  requireType(*this, Type::VECTOR, "asVector");
  return *vector_;
}
const ProfileValue::Map &ProfileValue::asMap() const {
  requireType(*this, Type::MAP, "asMap");
  return *map_;
}
const ProfileValue &ProfileValue::operator[](std::size_t i) const {
  const Vector &v = asVector();
  if (i >= v.size())
    throw index_error("ProfileValue: index " + std::to_string(i) + " is out of range for a Vector of " +
                      std::to_string(v.size()) + " elements");
  return v[i];
}
const ProfileValue &ProfileValue::operator[](StringRef key) const {
  const Map &m = asMap();
  auto it = m.find(key.str());
  if (it == m.end())
    throw poplar_error("ProfileValue: the Map has no key '" + key.str() + "'");
  return it->second;
}
const ProfileValue *ProfileValue::getOrNull(StringRef key) const {
  if (type_ != Type::MAP)
    return nullptr;
  auto it = map_->find(key.str());
  return it == map_->end() ? nullptr : &it->second;
}
std::size_t ProfileValue::size() const {
  if (type_ == Type::VECTOR)
    return vector_->size();
  if (type_ == Type::MAP)
    return map_->size();
  return 0;
}
std::vector<std::uint64_t> ProfileValue::toUintVector() const {
  std::vector<std::uint64_t> out;
  for (const ProfileValue &e : asVector())
    out.push_back(e.asUint());
  return out;
}
double ProfileValue::sumDouble() const {
  double s = 0;
  for (const ProfileValue &e : asVector())
    s += e.asDouble();
  return s;
}
std::int64_t ProfileValue::sumInt() const {
  std::int64_t s = 0;
  for (const ProfileValue &e : asVector())
    s += e.asInt();
  return s;
}
std::uint64_t ProfileValue::sumUint() const {
  std::uint64_t s = 0;
  for (const ProfileValue &e : asVector())
    s += e.asUint();
  return s;
}
bool ProfileValue::operator==(const ProfileValue &o) const {
  if (type_ != o.type_)
    return false;
  switch (type_) {
  case Type::BOOL_:
    return bool_ == o.bool_;
  case Type::STRING:
    return string_ == o.string_;
  case Type::NUMBER:
    return number_ == o.number_;
  case Type::VECTOR:
    return *vector_ == *o.vector_;
  case Type::MAP:
    return *map_ == *o.map_;
  }
  return false;
}

void serializeToJSON(std::ostream &out, const ProfileValue &value, bool prettyPrint) {
  out << toJson(value).dump(prettyPrint ? 2 : -1, ' ', false, nlohmann::json::error_handler_t::replace);
}
std::ostream &operator<<(std::ostream &os, const ProfileValue &value) {
  serializeToJSON(os, value, false);
  return os;
}

ProfileValue getAsProfileValue(const OptionFlags &flags) {
  ProfileValue::Map m;
  for (const auto &kv : flags)
    m.emplace(kv.first, ProfileValue(kv.second));
  return ProfileValue(m);
}

// ---- DebugInfo -------------------------------------------------------------------------

namespace {

std::atomic<DebugId> nextDebugId{1};

/// The file of DebugInfo::initializeStreamer and the records written to it.
struct DebugStreamer {
  std::mutex mutex;
  bool open = false;
  std::string fileName;
  DebugSerializationFormat format = DebugSerializationFormat::JSON;
  nlohmann::json contexts = nlohmann::json::array();
};

DebugStreamer &streamer() {
  static DebugStreamer s;
  return s;
}

} // namespace

namespace {

/// The records of live DebugInfos, by id: graph elements made under a
/// DebugContext find the record of the DebugInfo it came from here.
struct DebugRegistry {
  std::mutex mutex;
  std::unordered_map<DebugId, std::weak_ptr<const aspen::ir::DebugRecord>> live;
};

DebugRegistry &registry() {
  static DebugRegistry r;
  return r;
}

} // namespace

struct DebugInfo::Impl {
  std::shared_ptr<aspen::ir::DebugRecord> record;
};

DebugInfo::DebugInfo(const DebugContext &debugContext, std::string layer) : impl_(new Impl) {
  auto record = std::make_shared<aspen::ir::DebugRecord>();
  record->id = nextDebugId.fetch_add(1);
  record->parentId = debugContext.getId();
  record->parent = aspen::ir::findDebugRecord(record->parentId);
  record->path = debugContext.getPathName();
  record->layer = std::move(layer);
  record->location = debugContext.getLocation();
  {
    DebugRegistry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.live[record->id] = record;
  }
  impl_->record = std::move(record);
}

DebugInfo::~DebugInfo() {
  const aspen::ir::DebugRecord &rec = *impl_->record;
  {
    DebugRegistry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.live.erase(rec.id);
  }
  DebugStreamer &s = streamer();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.open)
    return;
  nlohmann::json record = toJson(ProfileValue(rec.values));
  record["id"] = rec.id;
  if (rec.parentId != 0)
    record["parent"] = rec.parentId;
  record["layer"] = rec.layer;
  record["path"] = rec.path;
  if (rec.location.isValid())
    record["location"] = {{"function", rec.location.getFunctionName()},
                          {"file", rec.location.getFileName()},
                          {"line", rec.location.getLineNumber()}};
  s.contexts.push_back(std::move(record));
}

DebugId DebugInfo::getId() const {
  return impl_->record->id;
}
std::string DebugInfo::getPathName() const {
  return impl_->record->path;
}
const std::string &DebugInfo::getLayer() const {
  return impl_->record->layer;
}
bool DebugInfo::setValue(std::string name, ProfileValue value) {
  return impl_->record->values.emplace(std::move(name), std::move(value)).second;
}
const ProfileValue::Map &DebugInfo::getValues() const {
  return impl_->record->values;
}

void DebugInfo::initializeStreamer(const std::string &fileName, const DebugSerializationFormat &format) {
  DebugStreamer &s = streamer();
  std::lock_guard<std::mutex> lock(s.mutex);
  // Fail now, not at closeStreamer, when the file cannot be written.
  std::ofstream probe(fileName, std::ios::binary | std::ios::trunc);
  if (!probe)
    throw poplar_error("DebugInfo::initializeStreamer: cannot write the debug information file '" + fileName +
                       "'");
  s.open = true;
  s.fileName = fileName;
  s.format = format;
  s.contexts = nlohmann::json::array();
}

void DebugInfo::closeStreamer() {
  DebugStreamer &s = streamer();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.open)
    return;
  s.open = false;
  const nlohmann::json doc = {{"contexts", std::move(s.contexts)}};
  s.contexts = nlohmann::json::array();
  std::ofstream out(s.fileName, std::ios::binary | std::ios::trunc);
  if (s.format == DebugSerializationFormat::CBOR) {
    const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(doc);
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  } else {
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  if (!out)
    throw poplar_error("DebugInfo::closeStreamer: cannot write the debug information file '" + s.fileName +
                       "'");
}

// ---- Tensor ----------------------------------------------------------------------------

std::string Tensor::shapeToString() const {
  std::string out = "[";
  const std::vector<std::size_t> s = shape();
  for (std::size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

bool Tensor::getConstantValueAs(const Type &hostType, void *val) const {
  if (!valid())
    throw poplar_error("getConstantValue() called on an invalid (default-constructed) tensor");
  if (val == nullptr)
    throw poplar_error("getConstantValue(): the output pointer is null");
  const aspen::ir::TensorView &view = getImpl();
  auto graph = view.lockGraph();
  if (!graph || numElements() == 0)
    return false;
  const std::size_t elementSize = view.elementType.size();
  const std::uint8_t *first = nullptr;
  for (const Segment &s : *view.segments) {
    if (s.var >= graph->variables.size() || !graph->variables[s.var].isConstant)
      return false;
    auto it = graph->initialValues.find(s.var);
    if (it == graph->initialValues.end())
      return false;
    const std::vector<std::uint8_t> &bytes = it->second;
    for (std::uint64_t k = 0; k < s.count; ++k) {
      const std::int64_t index = s.start + static_cast<std::int64_t>(k) * s.stride;
      const std::size_t offset = static_cast<std::size_t>(index) * elementSize;
      if (index < 0 || offset + elementSize > bytes.size())
        return false;
      const std::uint8_t *p = bytes.data() + offset;
      if (!first)
        first = p;
      else if (std::memcmp(first, p, elementSize) != 0)
        return false;
      if (s.stride == 0)
        break; // a broadcast repeats one element
    }
  }
  aspen::util::convertDeviceToHost(view.elementType, first, hostType, val, 1);
  return true;
}

// ---- Graph -----------------------------------------------------------------------------

Tensor Graph::getVariable(VariableRef v) const {
  getTarget();
  if (v.getId() >= data_->variables.size())
    throw index_error("getVariable: variable " + std::to_string(v.getId()) +
                      " is not a variable of this graph (" + std::to_string(data_->variables.size()) +
                      " variables)");
  const aspen::ir::Variable &var = data_->variables[v.getId()];
  return aspen::ir::makeVariableTensor(data_, static_cast<VarId>(v.getId()), var.type, var.shape);
}

Tensor Graph::addConstant(const Type &type, ArrayRef<std::size_t> shape, const void *values,
                          const TypeTraits &traits, bool broadcast, const DebugContext &debugContext) {
  // The host type with these traits (bool has the traits of unsigned char, and converts alike).
  const Type *hostType = nullptr;
  if (traits.isFloat) {
    if (traits.size == sizeof(float))
      hostType = &FLOAT;
    else if (traits.size == sizeof(double))
      hostType = &DOUBLE;
  } else if (traits.isIntegral) {
    switch (traits.size) {
    case 1:
      hostType = traits.isSigned ? &SIGNED_CHAR : &UNSIGNED_CHAR;
      break;
    case 2:
      hostType = traits.isSigned ? &SHORT : &UNSIGNED_SHORT;
      break;
    case 4:
      hostType = traits.isSigned ? &INT : &UNSIGNED_INT;
      break;
    case 8:
      hostType = traits.isSigned ? &LONGLONG : &UNSIGNED_LONGLONG;
      break;
    default:
      break;
    }
  }
  if (!hostType)
    throw type_error("Cannot create constant '" + debugContext.getPathName() + "': host values of " +
                     std::to_string(traits.size) + " bytes (" +
                     (traits.isFloat      ? "floating point"
                      : traits.isIntegral ? "integral"
                                          : "neither integral nor floating point") +
                     ") have no host type");
  return addConstantFromHost(type, shape, *hostType, values, broadcast ? 1 : ~std::size_t(0), broadcast,
                             debugContext);
}

bool Graph::isConstant(VariableRef v) const {
  getTarget();
  if (v.getId() >= data_->variables.size())
    throw index_error("isConstant: variable " + std::to_string(v.getId()) +
                      " is not a variable of this graph (" + std::to_string(data_->variables.size()) +
                      " variables)");
  return data_->variables[v.getId()].isConstant;
}

unsigned Graph::convertVirtualTileToPhysicalTile(unsigned virtualTileId) const {
  const Target &target = getTarget();
  if (virtualTileId >= target.getNumTiles())
    throw invalid_tile_mapping("convertVirtualTileToPhysicalTile: tile " + std::to_string(virtualTileId) +
                               " is beyond this graph's " + std::to_string(target.getNumTiles()) + " tiles");
  return toAbsoluteTile(virtualTileId);
}

} // namespace poplar

namespace aspen::ir {

std::shared_ptr<const DebugRecord> findDebugRecord(poplar::DebugId id) {
  if (id == 0)
    return nullptr;
  poplar::DebugRegistry &r = poplar::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.live.find(id);
  return it == r.live.end() ? nullptr : it->second.lock();
}

nlohmann::json profileValueToJson(const poplar::ProfileValue &value) {
  return poplar::toJson(value);
}

nlohmann::json debugContextsJson(const std::vector<std::shared_ptr<const DebugRecord>> &records) {
  std::map<poplar::DebugId, const DebugRecord *> all;
  for (const auto &r : records)
    for (const DebugRecord *p = r.get(); p && all.emplace(p->id, p).second; p = p->parent.get()) {
    }
  nlohmann::json out = nlohmann::json::array();
  for (const auto &[id, r] : all) {
    nlohmann::json j = {{"id", id},
                        {"parent", r->parentId},
                        {"layer", r->layer},
                        {"path", r->path},
                        {"values", poplar::toJson(poplar::ProfileValue(r->values))}};
    if (r->location.isValid())
      j["location"] = {{"function", r->location.getFunctionName()},
                       {"file", r->location.getFileName()},
                       {"line", r->location.getLineNumber()}};
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace aspen::ir

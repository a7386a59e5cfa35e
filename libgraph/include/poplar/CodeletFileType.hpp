// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_CODELETFILETYPE_HPP
#define POPLAR_CODELETFILETYPE_HPP

#include <string>

namespace poplar {

/// What a file given to `Graph::addCodelets` holds. `Auto` decides by the file's extension.
/// Aspen compiles C and C++ codelets for the host and loads `.gp` vertex libraries; assembly
/// and IR codelets are IPU machine code and are rejected when added.
enum class CodeletFileType { PreprocessedAsmSource, AsmSource, CSource, CppSource, IrSource, Object, Auto };

/// The type of a codelet file named `path`, from its extension: `.S` preprocessed assembly,
/// `.s` assembly, `.c` C, `.cpp`/`.cc`/`.cxx`/`.C` C++, `.ll`/`.bc` IR, `.gp`/`.o` object.
/// Throws poplar::poplar_error naming the path for any other extension.
CodeletFileType getCodeletFileType(const char *path);

/// The usual extension of a file of `type` (with the dot): `.S`, `.s`, `.c`, `.cpp`, `.ll`,
/// `.gp`; empty for `Auto`.
std::string getExtensionFromFileType(CodeletFileType type);

/// The compiler's `-x` language of `type`: `assembler-with-cpp`, `assembler`, `c`, `c++`,
/// `ir`; empty for `Object` and `Auto` (nothing to compile).
std::string getLanguageOption(CodeletFileType type);

} // namespace poplar

#endif

// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPNN_GRUDEF_HPP
#define POPNN_GRUDEF_HPP

/// The three units of a basic GRU cell: two gates and the candidate. Each has its own slice
/// of the weights and biases (the outermost dimension of popnn::gru::GruWeights' tensors, in
/// the order GruParams::cellOrder gives).
enum BasicGruCellUnit {
  BASIC_GRU_CELL_RESET_GATE = 0,
  BASIC_GRU_CELL_UPDATE_GATE = 1,
  BASIC_GRU_CELL_CANDIDATE = 2,
  BASIC_GRU_CELL_NUM_UNITS = 3
};

#endif

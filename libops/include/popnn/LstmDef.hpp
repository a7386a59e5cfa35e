// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPNN_LSTMDEF_HPP
#define POPNN_LSTMDEF_HPP

/// The four units of a basic LSTM cell: three gates and the candidate. Each has its own slice
/// of the weights and biases (the outermost dimension of popnn::lstm::LstmWeights' tensors,
/// in the order LstmParams::cellOrder gives).
enum BasicLstmCellUnit {
  BASIC_LSTM_CELL_FORGET_GATE = 0,
  BASIC_LSTM_CELL_INPUT_GATE = 1,
  BASIC_LSTM_CELL_CANDIDATE = 2,
  BASIC_LSTM_CELL_OUTPUT_GATE = 3,
  BASIC_LSTM_CELL_NUM_UNITS = 4
};

#endif

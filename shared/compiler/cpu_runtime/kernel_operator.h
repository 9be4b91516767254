// ascrun cpu runtime: the Ascend C API (kernel_operator.h) for compiling pyasc's generated
// Ascend C with the host C++ compiler. Each header holds one API family; see ascrun/*.h.
#pragma once

#include "ascrun/core.h"
#include "ascrun/half.h"
#include "ascrun/tensor.h"
#include "ascrun/sys_var.h"
#include "ascrun/sync.h"
#include "ascrun/data_copy.h"
#include "ascrun/mask.h"
#include "ascrun/vec_binary.h"
#include "ascrun/vec_binary_scalar.h"
#include "ascrun/vec_unary.h"
#include "ascrun/vec_duplicate.h"
#include "ascrun/vec_copy.h"
#include "ascrun/vec_cast.h"
#include "ascrun/vec_transpose.h"
#include "ascrun/tpipe.h"
#include "ascrun/debug.h"
#include "ascrun/launch.h"

// ascrun cpu runtime: the Matmul high-level API's include, as pyasc's Ascend C names it.
#pragma once

#include "ascrun/cube/matmul.h"

// ascrun cpu runtime: AIPP, the AI Core's image pre-processing (SetAippFunctions.md): the source
// image formats and AippParams with the reference's fields and defaults.
//
// SetAippFunctions only sets the registers LoadImageToLocal reads while it moves an image into L1.
// The cpu target checks the call as the reference constrains it (source set and aligned for its
// format, modes in range, an output type AIPP produces). LoadImageToLocal is not implemented, so
// nothing reads the settings yet; the reference's rule that the GlobalTensor's type match the
// format's applies to that read and is therefore not enforced here (pyasc's test passes int8 and
// half tensors as RGB888_U8 and copies them unchanged).
#pragma once

#include "ascrun/core/core.h"
#include "ascrun/core/half.h"
#include "ascrun/core/tensor.h"

#pragma GCC visibility push(hidden)

namespace AscendC {

enum class AippInputFormat : uint8_t { YUV420SP_U8 = 0, XRGB8888_U8 = 1, RGB888_U8 = 4, YUV400_U8 = 9 };

template <typename T>
struct AippPaddingParams {
    uint32_t paddingMode = 0;  // 0 constant (left/right only), 1 row/column copy, 2 block copy, 3 mirror block
    T paddingValueCh0 = 0;
    T paddingValueCh1 = 0;
    T paddingValueCh2 = 0;
    T paddingValueCh3 = 0;
};

struct AippSwapParams {
    bool isSwapRB = false;
    bool isSwapUV = false;
    bool isSwapAX = false;
};

struct AippSingleLineParams {
    bool isSingleLineCopy = false;
};

struct AippDataTypeConvParams {
    uint8_t dtcMeanCh0 = 0;
    uint8_t dtcMeanCh1 = 0;
    uint8_t dtcMeanCh2 = 0;
    half dtcMinCh0 = half(0.0f);
    half dtcMinCh1 = half(0.0f);
    half dtcMinCh2 = half(0.0f);
    half dtcVarCh0 = half(1.0f);
    half dtcVarCh1 = half(1.0f);
    half dtcVarCh2 = half(1.0f);
    uint32_t dtcRoundMode = 0;
};

template <typename T>
struct AippChannelPaddingParams {
    uint32_t cPaddingMode = 0;  // 0: channels padded to 32 bytes, 1: to 4 channels
    T cPaddingValue = 0;
};

struct AippColorSpaceConvParams {
    bool isEnableCsc = false;
    int16_t cscMatrixR0C0 = 0;
    int16_t cscMatrixR0C1 = 0;
    int16_t cscMatrixR0C2 = 0;
    int16_t cscMatrixR1C0 = 0;
    int16_t cscMatrixR1C1 = 0;
    int16_t cscMatrixR1C2 = 0;
    int16_t cscMatrixR2C0 = 0;
    int16_t cscMatrixR2C1 = 0;
    int16_t cscMatrixR2C2 = 0;
    uint8_t cscBiasIn0 = 0;
    uint8_t cscBiasIn1 = 0;
    uint8_t cscBiasIn2 = 0;
    uint8_t cscBiasOut0 = 0;
    uint8_t cscBiasOut1 = 0;
    uint8_t cscBiasOut2 = 0;
};

template <typename T>
struct AippParams {
    AippPaddingParams<T> paddingParams;
    AippSwapParams swapParams;
    AippSingleLineParams singleLineParams;
    AippDataTypeConvParams dtcParams;
    AippChannelPaddingParams<T> cPaddingParams;
    AippColorSpaceConvParams cscParams;
};

}  // namespace AscendC

namespace ascrun {
namespace aipp {

inline const char* format_name(AscendC::AippInputFormat f) {
    switch (f) {
        case AscendC::AippInputFormat::YUV420SP_U8: return "YUV420SP_U8";
        case AscendC::AippInputFormat::XRGB8888_U8: return "XRGB8888_U8";
        case AscendC::AippInputFormat::RGB888_U8: return "RGB888_U8";
        case AscendC::AippInputFormat::YUV400_U8: return "YUV400_U8";
    }
    return nullptr;
}

// The source's GM alignment by format (SetAippFunctions.md, 约束说明).
inline uint32_t source_alignment(AscendC::AippInputFormat f) {
    return f == AscendC::AippInputFormat::XRGB8888_U8 ? 4 : f == AscendC::AippInputFormat::YUV420SP_U8 ? 2 : 1;
}

template <typename T>
void check_source(BlockContext& b, const char* role, const AscendC::GlobalTensor<T>& src, AscendC::AippInputFormat f) {
    const char* api = "SetAippFunctions";
    const uintptr_t addr = reinterpret_cast<uintptr_t>(src.ascrun_access(b, api, 0, 1, false));
    const uint32_t align = source_alignment(f);
    if (addr % align != 0) {
        fault(format("%s: %s is not %u-byte aligned in GM (a %s image must be)", api, role, align, format_name(f)));
    }
}

template <typename U>
void check_params(const AscendC::AippParams<U>& config) {
    static_assert(std::is_same<U, uint8_t>::value || std::is_same<U, int8_t>::value || std::is_same<U, half>::value,
                  "AippParams<U>: AIPP outputs uint8_t, int8_t or half");
    const char* api = "SetAippFunctions";
    if (config.paddingParams.paddingMode > 3) {
        fault(format("%s: paddingMode %u is not 0-3", api, config.paddingParams.paddingMode));
    }
    if (config.cPaddingParams.cPaddingMode > 1) {
        fault(format("%s: cPaddingMode %u is not 0 or 1", api, config.cPaddingParams.cPaddingMode));
    }
}

}  // namespace aipp
}  // namespace ascrun

namespace AscendC {

// YUV400, RGB888 and XRGB8888 images.
template <typename T, typename U>
void SetAippFunctions(const GlobalTensor<T>& src0, AippInputFormat format, AippParams<U> config) {
    ascrun::BlockContext& b = ascrun::enter();
    if (ascrun::aipp::format_name(format) == nullptr) {
        ascrun::fault(ascrun::format("SetAippFunctions: format %u is not an AippInputFormat", unsigned(format)));
    }
    if (format == AippInputFormat::YUV420SP_U8) {
        ascrun::fault("SetAippFunctions: a YUV420SP_U8 image has two planes: pass its UV plane as src1");
    }
    ascrun::aipp::check_source(b, "src0", src0, format);
    ascrun::aipp::check_params(config);
}

// YUV420 semi-planar images: src0 is the Y plane, src1 the UV plane.
template <typename T, typename U>
void SetAippFunctions(const GlobalTensor<T>& src0, const GlobalTensor<T>& src1, AippInputFormat format,
                      AippParams<U> config) {
    ascrun::BlockContext& b = ascrun::enter();
    if (format != AippInputFormat::YUV420SP_U8) {
        ascrun::fault("SetAippFunctions: src1 is the UV plane of a YUV420SP_U8 image; other formats take one source");
    }
    ascrun::aipp::check_source(b, "src0", src0, format);
    ascrun::aipp::check_source(b, "src1", src1, format);
    ascrun::aipp::check_params(config);
}

}  // namespace AscendC

#pragma GCC visibility pop

// ---- copper bench: inputs and comparisons (host C++, no CUDA) ----
// Inputs come from the generator of copper's simulator (SplitMix64,
// src/sim/params.rs) mapped to values exactly as copper::sim::fill maps
// them, so the GPU runs on the inputs `copper simulate` uses with the same
// parameter file. Build with `-ffp-contract=off` for the host: a fused
// multiply-add would round random floats differently.

[[maybe_unused]] static inline unsigned long long copper_splitmix_next(unsigned long long *copper_state) {
    *copper_state += 0x9E3779B97F4A7C15ull;
    unsigned long long copper_z = *copper_state;
    copper_z = (copper_z ^ (copper_z >> 30)) * 0xBF58476D1CE4E5B9ull;
    copper_z = (copper_z ^ (copper_z >> 27)) * 0x94D049BB133111EBull;
    return copper_z ^ (copper_z >> 31);
}

// init = "random", floating-point elements: min + u * (max - min), u uniform
// in [0, 1) from the top 53 bits; a 16-bit float (__half, __nv_bfloat16)
// through float, as copper::sim::fill_value converts it.
template <typename CopperT>
static inline void copper_fill_random_real(CopperT *copper_out, size_t copper_len,
                                    unsigned long long copper_seed, double copper_min,
                                    double copper_range) {
    unsigned long long copper_state = copper_seed;
    for (size_t copper_i = 0; copper_i < copper_len; ++copper_i) {
        double copper_unit =
            static_cast<double>(copper_splitmix_next(&copper_state) >> 11) / 9007199254740992.0;
        double copper_scaled = copper_unit * copper_range;
        if constexpr (sizeof(CopperT) == 2) {
            copper_out[copper_i] = static_cast<CopperT>(static_cast<float>(copper_min + copper_scaled));
        } else {
            copper_out[copper_i] = static_cast<CopperT>(copper_min + copper_scaled);
        }
    }
}

// init = "random", integer elements: lowest + next % count (wrapping), through
// double like the simulator; unsigned 64-bit elements saturate below at 0.
template <typename CopperT>
static inline void copper_fill_random_int(CopperT *copper_out, size_t copper_len,
                                   unsigned long long copper_seed, long long copper_lowest,
                                   unsigned long long copper_count, bool copper_unsigned64) {
    unsigned long long copper_state = copper_seed;
    for (size_t copper_i = 0; copper_i < copper_len; ++copper_i) {
        unsigned long long copper_r = copper_splitmix_next(&copper_state) % copper_count;
        long long copper_v =
            static_cast<long long>(static_cast<unsigned long long>(copper_lowest) + copper_r);
        double copper_d = static_cast<double>(copper_v);
        if (copper_unsigned64) {
            copper_out[copper_i] = copper_d < 0.0
                                       ? static_cast<CopperT>(0)
                                       : static_cast<CopperT>(static_cast<unsigned long long>(copper_d));
        } else {
            copper_out[copper_i] = static_cast<CopperT>(static_cast<long long>(copper_d));
        }
    }
}

// init = "const" and "zero".
template <typename CopperT>
static inline void copper_fill_const(CopperT *copper_out, size_t copper_len, CopperT copper_value) {
    for (size_t copper_i = 0; copper_i < copper_len; ++copper_i) {
        copper_out[copper_i] = copper_value;
    }
}

// init = "values": the list repeated.
template <typename CopperT>
static inline void copper_fill_cycle(CopperT *copper_out, size_t copper_len, const CopperT *copper_values,
                              size_t copper_count) {
    for (size_t copper_i = 0; copper_i < copper_len; ++copper_i) {
        copper_out[copper_i] = copper_values[copper_i % copper_count];
    }
}

// Floats match when |a - b| <= tolerance * max(1, |a|, |b|) (relative above
// magnitude 1, absolute below); NaN matches NaN, infinities match exactly.
// A template, like everything here, so that a program without floats does
// not carry an unused function (nvcc warns about those).
template <typename CopperF>
static inline bool copper_close(CopperF copper_x, CopperF copper_y, double copper_tolerance) {
    const double copper_a = copper_x;
    const double copper_b = copper_y;
    if (std::isnan(copper_a) || std::isnan(copper_b)) {
        return std::isnan(copper_a) && std::isnan(copper_b);
    }
    if (std::isinf(copper_a) || std::isinf(copper_b)) {
        return copper_a == copper_b;
    }
    double copper_scale = 1.0;
    if (std::fabs(copper_a) > copper_scale) {
        copper_scale = std::fabs(copper_a);
    }
    if (std::fabs(copper_b) > copper_scale) {
        copper_scale = std::fabs(copper_b);
    }
    return std::fabs(copper_a - copper_b) <= copper_tolerance * copper_scale;
}

#define COPPER_FLOAT_TOLERANCE 1e-4
#define COPPER_DOUBLE_TOLERANCE 1e-10
#define COPPER_HALF_TOLERANCE 1e-2

// Whether CopperT is a 16-bit float (__half, __nv_bfloat16).
template <typename CopperT>
static constexpr bool copper_is_half = sizeof(CopperT) == 2 && !std::is_integral<CopperT>::value;

// A value as a double for printing (a 16-bit float through its float).
template <typename CopperT>
static inline double copper_to_double(CopperT copper_x) {
    if constexpr (copper_is_half<CopperT>) {
        return static_cast<double>(static_cast<float>(copper_x));
    } else {
        return static_cast<double>(copper_x);
    }
}

// Floats, doubles and 16-bit floats within their tolerance; integers (and
// anything else) bit for bit.
template <typename CopperT>
static inline bool copper_same(CopperT copper_a, CopperT copper_b) {
    if constexpr (copper_is_half<CopperT>) {
        return copper_close(static_cast<float>(copper_a), static_cast<float>(copper_b),
                            COPPER_HALF_TOLERANCE);
    } else if constexpr (std::is_same<CopperT, float>::value) {
        return copper_close(copper_a, copper_b, COPPER_FLOAT_TOLERANCE);
    } else if constexpr (std::is_same<CopperT, double>::value) {
        return copper_close(copper_a, copper_b, COPPER_DOUBLE_TOLERANCE);
    } else {
        return std::memcmp(&copper_a, &copper_b, sizeof(CopperT)) == 0;
    }
}

// Compares two versions of an array; prints how many elements differ and
// the first that does.
template <typename CopperT>
static inline bool copper_compare(const char *copper_name, const CopperT *copper_expected,
                           const CopperT *copper_actual, size_t copper_len) {
    size_t copper_bad = 0;
    size_t copper_first = 0;
    for (size_t copper_i = 0; copper_i < copper_len; ++copper_i) {
        if (!copper_same(copper_expected[copper_i], copper_actual[copper_i])) {
            if (copper_bad == 0) {
                copper_first = copper_i;
            }
            ++copper_bad;
        }
    }
    if (copper_bad > 0) {
        std::printf("  %s: %zu of %zu elements differ; first at index %zu: original %.9g, "
                    "optimized %.9g\n",
                    copper_name, copper_bad, copper_len, copper_first,
                    copper_to_double(copper_expected[copper_first]),
                    copper_to_double(copper_actual[copper_first]));
    }
    return copper_bad == 0;
}

// Compares one field of two versions of an array of structs held as bytes
// (`copper_count` elements of `copper_stride` bytes, the field of type
// CopperT at `copper_offset`), like copper_compare.
template <typename CopperT>
static inline bool copper_compare_field(const char *copper_name, const unsigned char *copper_expected,
                                        const unsigned char *copper_actual, size_t copper_count,
                                        size_t copper_stride, size_t copper_offset) {
    size_t copper_bad = 0;
    size_t copper_first = 0;
    CopperT copper_first_expected{};
    CopperT copper_first_actual{};
    for (size_t copper_i = 0; copper_i < copper_count; ++copper_i) {
        CopperT copper_e;
        CopperT copper_a;
        std::memcpy(&copper_e, copper_expected + copper_i * copper_stride + copper_offset, sizeof(CopperT));
        std::memcpy(&copper_a, copper_actual + copper_i * copper_stride + copper_offset, sizeof(CopperT));
        if (!copper_same(copper_e, copper_a)) {
            if (copper_bad == 0) {
                copper_first = copper_i;
                copper_first_expected = copper_e;
                copper_first_actual = copper_a;
            }
            ++copper_bad;
        }
    }
    if (copper_bad > 0) {
        std::printf("  %s: %zu of %zu elements differ; first at index %zu: original %.9g, "
                    "optimized %.9g\n",
                    copper_name, copper_bad, copper_count, copper_first,
                    copper_to_double(copper_first_expected),
                    copper_to_double(copper_first_actual));
    }
    return copper_bad == 0;
}

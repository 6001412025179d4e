// ---- copper bench: CUDA checks, device arrays, timing, options ----

#define COPPER_CHECK(copper_call) copper_check((copper_call), #copper_call, __FILE__, __LINE__)

static inline void copper_check(cudaError_t copper_err, const char *copper_what, const char *copper_file,
                         int copper_line) {
    if (copper_err != cudaSuccess) {
        std::fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", copper_file, copper_line, copper_what,
                     cudaGetErrorString(copper_err));
        std::exit(3);
    }
}

static int copper_runs = COPPER_DEFAULT_RUNS;
static int copper_warmup = COPPER_DEFAULT_WARMUP;
static bool copper_profile = false;

// One array of a launch: its initial contents on the host and the device,
// the array the kernel works on, and room for both versions' results.
template <typename CopperT>
struct CopperArray {
    const char *copper_name;
    size_t copper_len;
    CopperT *copper_init;
    CopperT *copper_expected;
    CopperT *copper_actual;
    CopperT *copper_dev;
    CopperT *copper_dev_init;
    bool copper_owned;

    CopperArray(const char *copper_name_, size_t copper_len_)
        : copper_name(copper_name_), copper_len(copper_len_),
          copper_init(new CopperT[copper_len_ + 1]()),
          copper_expected(new CopperT[copper_len_ + 1]()),
          copper_actual(new CopperT[copper_len_ + 1]()), copper_dev(nullptr),
          copper_dev_init(nullptr), copper_owned(true) {
        COPPER_CHECK(cudaMalloc(reinterpret_cast<void **>(&copper_dev), copper_bytes() + 1));
        COPPER_CHECK(cudaMalloc(reinterpret_cast<void **>(&copper_dev_init), copper_bytes() + 1));
    }

    ~CopperArray() {
        delete[] copper_init;
        delete[] copper_expected;
        delete[] copper_actual;
        if (copper_owned) {
            COPPER_CHECK(cudaFree(copper_dev));
        }
        COPPER_CHECK(cudaFree(copper_dev_init));
    }

    CopperArray(const CopperArray &) = delete;
    CopperArray &operator=(const CopperArray &) = delete;

    size_t copper_bytes() const { return copper_len * sizeof(CopperT); }

    // Works on a `__constant__`/`__device__` global instead of an allocation.
    template <typename CopperSymbol>
    void copper_bind(const CopperSymbol &copper_symbol) {
        void *copper_address = nullptr;
        size_t copper_size = 0;
        COPPER_CHECK(cudaGetSymbolAddress(&copper_address, copper_symbol));
        COPPER_CHECK(cudaGetSymbolSize(&copper_size, copper_symbol));
        if (copper_bytes() > copper_size) {
            std::fprintf(stderr, "copper bench: the parameter file gives %s %zu bytes, it has %zu\n",
                         copper_name, copper_bytes(), copper_size);
            std::exit(2);
        }
        COPPER_CHECK(cudaFree(copper_dev));
        copper_dev = static_cast<CopperT *>(copper_address);
        copper_owned = false;
    }

    void copper_upload() {
        COPPER_CHECK(cudaMemcpy(copper_dev_init, copper_init, copper_bytes(), cudaMemcpyHostToDevice));
    }

    void copper_reset() {
        COPPER_CHECK(cudaMemcpy(copper_dev, copper_dev_init, copper_bytes(), cudaMemcpyDeviceToDevice));
    }

    void copper_save_expected() {
        COPPER_CHECK(cudaMemcpy(copper_expected, copper_dev, copper_bytes(), cudaMemcpyDeviceToHost));
    }

    void copper_download() {
        COPPER_CHECK(cudaMemcpy(copper_actual, copper_dev, copper_bytes(), cudaMemcpyDeviceToHost));
    }

    bool copper_matches() {
        copper_download();
        return copper_compare(copper_name, copper_expected, copper_actual, copper_len);
    }
};

// Resets the inputs, launches once, checks the launch and waits for it.
template <typename CopperReset, typename CopperRun>
static inline void copper_run_checked(CopperReset copper_reset, CopperRun copper_run) {
    copper_reset();
    copper_run();
    COPPER_CHECK(cudaGetLastError());
    COPPER_CHECK(cudaDeviceSynchronize());
}

// Milliseconds per launch over the timed runs.
struct CopperStats {
    int copper_count;
    float copper_median;
    float copper_min;
    float copper_max;
};

// Warms up, then times each launch with CUDA events (inputs reset before
// every launch, outside the timed interval).
template <typename CopperReset, typename CopperRun>
static CopperStats copper_time(CopperReset copper_reset, CopperRun copper_run) {
    CopperStats copper_stats = {0, 0.0f, 0.0f, 0.0f};
    if (copper_profile) {
        return copper_stats;
    }
    for (int copper_i = 0; copper_i < copper_warmup; ++copper_i) {
        copper_reset();
        copper_run();
        COPPER_CHECK(cudaGetLastError());
    }
    COPPER_CHECK(cudaDeviceSynchronize());
    cudaEvent_t copper_start;
    cudaEvent_t copper_stop;
    COPPER_CHECK(cudaEventCreate(&copper_start));
    COPPER_CHECK(cudaEventCreate(&copper_stop));
    std::vector<float> copper_ms;
    copper_ms.reserve(static_cast<size_t>(copper_runs));
    for (int copper_i = 0; copper_i < copper_runs; ++copper_i) {
        copper_reset();
        COPPER_CHECK(cudaEventRecord(copper_start));
        copper_run();
        COPPER_CHECK(cudaEventRecord(copper_stop));
        COPPER_CHECK(cudaGetLastError());
        COPPER_CHECK(cudaEventSynchronize(copper_stop));
        float copper_elapsed = 0.0f;
        COPPER_CHECK(cudaEventElapsedTime(&copper_elapsed, copper_start, copper_stop));
        copper_ms.push_back(copper_elapsed);
    }
    COPPER_CHECK(cudaEventDestroy(copper_start));
    COPPER_CHECK(cudaEventDestroy(copper_stop));
    std::sort(copper_ms.begin(), copper_ms.end());
    size_t copper_n = copper_ms.size();
    copper_stats.copper_count = copper_runs;
    copper_stats.copper_median = copper_n % 2 == 1
                                     ? copper_ms[copper_n / 2]
                                     : 0.5f * (copper_ms[copper_n / 2 - 1] + copper_ms[copper_n / 2]);
    copper_stats.copper_min = copper_ms.front();
    copper_stats.copper_max = copper_ms.back();
    return copper_stats;
}

static inline void copper_print_stats(const char *copper_kernel, const CopperStats *copper_stats) {
    std::printf("%s %.4f ms [min %.4f, max %.4f, %d runs]", copper_kernel,
                static_cast<double>(copper_stats->copper_median),
                static_cast<double>(copper_stats->copper_min),
                static_cast<double>(copper_stats->copper_max), copper_stats->copper_count);
}

// One line per kernel and size.
static inline void copper_report(const char *copper_label, const char *copper_original,
                          const CopperStats *copper_original_stats, const char *copper_optimized,
                          const CopperStats *copper_optimized_stats, bool copper_match) {
    std::printf("%s: ", copper_label);
    if (copper_profile) {
        std::printf("%s%s%s launched once each (--profile)", copper_original,
                    copper_optimized != nullptr ? ", " : "",
                    copper_optimized != nullptr ? copper_optimized : "");
    } else {
        copper_print_stats(copper_original, copper_original_stats);
        if (copper_optimized != nullptr) {
            std::printf(" | ");
            copper_print_stats(copper_optimized, copper_optimized_stats);
            if (copper_optimized_stats->copper_median > 0.0f) {
                std::printf(" | speedup %.2fx",
                            static_cast<double>(copper_original_stats->copper_median /
                                                copper_optimized_stats->copper_median));
            }
        }
    }
    if (copper_optimized == nullptr) {
        std::printf(" | no suggestion\n");
    } else if (copper_match) {
        std::printf(" | outputs match\n");
    } else {
        std::printf(" | OUTPUTS DIFFER\n");
    }
    std::fflush(stdout);
}

static inline bool copper_parse_count(const char *copper_text, int copper_least, int *copper_out) {
    char *copper_end = nullptr;
    long copper_value = std::strtol(copper_text, &copper_end, 10);
    if (copper_end == copper_text || *copper_end != '\0' || copper_value < copper_least ||
        copper_value > 1000000) {
        return false;
    }
    *copper_out = static_cast<int>(copper_value);
    return true;
}

static inline bool copper_parse_options(int copper_argc, char **copper_argv) {
    for (int copper_i = 1; copper_i < copper_argc; ++copper_i) {
        const char *copper_arg = copper_argv[copper_i];
        bool copper_has_value = copper_i + 1 < copper_argc;
        if (std::strcmp(copper_arg, "--profile") == 0) {
            copper_profile = true;
        } else if (std::strcmp(copper_arg, "--runs") == 0 && copper_has_value &&
                   copper_parse_count(copper_argv[copper_i + 1], 1, &copper_runs)) {
            ++copper_i;
        } else if (std::strcmp(copper_arg, "--warmup") == 0 && copper_has_value &&
                   copper_parse_count(copper_argv[copper_i + 1], 0, &copper_warmup)) {
            ++copper_i;
        } else {
            std::fprintf(stderr,
                         "usage: %s [--runs N] [--warmup N] [--profile]\n"
                         "  --runs N    timed launches per kernel and size (default %d)\n"
                         "  --warmup N  launches before timing (default %d)\n"
                         "  --profile   launch each kernel once per size, no timing (for ncu)\n",
                         copper_argv[0], COPPER_DEFAULT_RUNS, COPPER_DEFAULT_WARMUP);
            return false;
        }
    }
    return true;
}

static inline void copper_print_device() {
    int copper_device = 0;
    COPPER_CHECK(cudaGetDevice(&copper_device));
    cudaDeviceProp copper_prop;
    COPPER_CHECK(cudaGetDeviceProperties(&copper_prop, copper_device));
    std::printf("device %d: %s (compute capability %d.%d)\n", copper_device, copper_prop.name,
                copper_prop.major, copper_prop.minor);
}

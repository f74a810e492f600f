#include "csystem_shims.h"
#include <stdio.h>
#include <stdlib.h>

int blurfarm_cpu_supported(void) {
#if defined(__x86_64__) && defined(BLURFARM_REQUIRES_X86_64_V3)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
#else
    return 1;
#endif
}

const char *blurfarm_cpu_target(void) {
#if defined(__x86_64__) && defined(BLURFARM_REQUIRES_X86_64_V3)
    return "x86-64-v3";
#else
    return "baseline";
#endif
}

/// Runs before main: this file is compiled for the baseline CPU, the Swift code is not.
__attribute__((constructor)) static void blurfarm_check_cpu(void) {
    if (!blurfarm_cpu_supported()) {
        fputs("blurfarm: error: this CPU lacks AVX2/FMA (x86-64-v3), which this build of blurfarm "
              "needs; rebuild with BLURFARM_BASELINE_CPU=1 for older CPUs\n", stderr);
        exit(70);
    }
}

// The declaration in include/CLibFuzzer.h is all there is: libFuzzer itself is linked by -sanitize=fuzzer.
#include "CLibFuzzer.h"

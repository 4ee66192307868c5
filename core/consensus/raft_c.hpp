#pragma once

// libraft's C header: it declares no extern "C" of its own.
extern "C" {
#include <raft.h>
}

// b.cc: closes the cycle through its .cc, as cli.cc and compare.h once did.
#include "x/a.h"

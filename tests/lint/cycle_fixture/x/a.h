#pragma once
#include "y/b.h"

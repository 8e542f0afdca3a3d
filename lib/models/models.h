/* models/models.h: every model's file, included by recur.h in each of its instantiations (each
 * file's forward), and again by recur_gradchunk.h with VLA_MODEL_GRAD where the backward is
 * instantiated (each file's second part); a model is a row of vlalists.h's VLA_MODELS, its file
 * here and its line below (docs/adding.md). */
#include "models/la.h"
#include "models/delta.h"
#include "models/rls.h"
#include "models/vla1.h"
#include "models/vla3.h"
#include "models/gdn.h"
#include "models/mamba2.h"
#include "models/gla.h"
#include "models/kda.h"
#include "models/rwkv7.h"
#include "models/deltaproduct.h"
#include "models/loglinear.h"
#include "models/mamba3.h"

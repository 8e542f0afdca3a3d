/* recur_check.h: recur.h refuses an instantiation whose includer left out an arithmetic macro,
 * naming it (lib/arith_native.h documents each). Host-only ones are not needed by a device
 * instantiation (VLA_RECUR_DEVICE); LESSD may stand in for CMPD. */
#ifndef SFX
#error "recur.h: the includer did not define SFX (the suffix of the names made here)"
#endif
#ifndef CXP
#error "recur.h: the includer did not define CXP (the context parameter)"
#endif
#ifndef CX
#error "recur.h: the includer did not define CX (the context argument)"
#endif
#ifndef NUM
#error "recur.h: the includer did not define NUM (the number type)"
#endif
#ifndef NREF
#error "recur.h: the includer did not define NREF (a reference to a number)"
#endif
#ifndef E
#error "recur.h: the includer did not define E (element i of an array)"
#endif
#ifndef R
#error "recur.h: the includer did not define R (the number a reference refers to)"
#endif
#ifndef P
#error "recur.h: the includer did not define P (a reference to a number)"
#endif
#ifndef SCALAR
#error "recur.h: the includer did not define SCALAR (a scalar temporary)"
#endif
#ifndef FRAME_BEGIN
#error "recur.h: the includer did not define FRAME_BEGIN (the start of a function's temporaries)"
#endif
#ifndef FRAME_END
#error "recur.h: the includer did not define FRAME_END (their end)"
#endif
#ifndef ADD
#error "recur.h: the includer did not define ADD (r = a + b, rounded)"
#endif
#ifndef SUB
#error "recur.h: the includer did not define SUB (r = a - b, rounded)"
#endif
#ifndef MUL
#error "recur.h: the includer did not define MUL (r = a * b, rounded)"
#endif
#ifndef DIV
#error "recur.h: the includer did not define DIV (r = a / b, rounded)"
#endif
#ifndef SQRT
#error "recur.h: the includer did not define SQRT (r = sqrt(a), rounded)"
#endif
#ifndef EXP
#error "recur.h: the includer did not define EXP (r = exp(a): binary64 exp rounded to the compute format)"
#endif
#ifndef EXP2
#error "recur.h: the includer did not define EXP2 (r = 2^a: binary64 exp2 rounded to the compute format)"
#endif
#ifndef FLOOR
#error "recur.h: the includer did not define FLOOR (r = floor(a), exact)"
#endif
#ifndef COSSIN
#error "recur.h: the includer did not define COSSIN (c = cos(a), s = sin(a): binary64 rounded to the compute format)"
#endif
#ifndef COPY
#error "recur.h: the includer did not define COPY (r = a, exact)"
#endif
#ifndef SETI
#error "recur.h: the includer did not define SETI (r = a small integer)"
#endif
#ifndef STORE
#error "recur.h: the includer did not define STORE (r rounded to the storage format)"
#endif
#ifndef ISFIN
#error "recur.h: the includer did not define ISFIN (a is finite)"
#endif
#ifndef LESS
#error "recur.h: the includer did not define LESS (a < b)"
#endif
#ifndef ABSLESS
#error "recur.h: the includer did not define ABSLESS (|a| < b)"
#endif
#ifndef TINY
#error "recur.h: the includer did not define TINY (the compute format's smallest normal)"
#endif
#ifndef ARITH_ENTER
#error "recur.h: the includer did not define ARITH_ENTER (the start of a public entry)"
#endif
#ifndef ARITH_LEAVE
#error "recur.h: the includer did not define ARITH_LEAVE (its end)"
#endif
#if !defined(CMPD) && !defined(LESSD)
#error "recur.h: the includer did not define CMPD (the sign of a - c, c a binary64 constant) or LESSD"
#endif
#ifndef VLA_RECUR_DEVICE
#ifndef SETD
#error "recur.h: the includer did not define SETD (r = a binary64 constant, rounded)"
#endif
#ifndef LOAD_IN
#error "recur.h: the includer did not define LOAD_IN (an input rounded to the storage format)"
#endif
#ifndef LOAD_PHI
#error "recur.h: the includer did not define LOAD_PHI (phi of an input, rounded to the storage format)"
#endif
#ifndef LOAD_LOG
#error "recur.h: the includer did not define LOAD_LOG (log of an input, rounded to the io format)"
#endif
#ifndef TOD
#error "recur.h: the includer did not define TOD (a number to binary64)"
#endif
#ifndef NUM_ALLOC
#error "recur.h: the includer did not define NUM_ALLOC (n numbers, zero)"
#endif
#ifndef NUM_FREE
#error "recur.h: the includer did not define NUM_FREE (their end)"
#endif
#ifndef SAVE_ARRAY
#error "recur.h: the includer did not define SAVE_ARRAY (n numbers to a FILE, bit for bit)"
#endif
#ifndef LOAD_ARRAY
#error "recur.h: the includer did not define LOAD_ARRAY (n numbers from a FILE)"
#endif
#endif

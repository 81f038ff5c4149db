"""The same workloads in PyTensor and JAX (the `bench` extra), built the way their users
would write them: pytensor.scan with the same step functions, and jax.lax.scan/while_loop
under jax.jit. Each builder takes the workload's values and returns a callable of them."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")


def available() -> dict[str, bool]:
    found = {}
    for module in ("pytensor", "jax"):
        try:
            __import__(module)
            found[module] = True
        except ImportError:
            found[module] = False
    return found


# ---------------------------------------------------------------------------- PyTensor
def pytensor_function(name: str, params: dict, mode: str | None) -> Callable:
    """A compiled PyTensor function for workload ``name`` (mode None: PyTensor's default)."""
    import pytensor
    import pytensor.tensor as pt

    build = _PYTENSOR[name]
    inputs, outputs = build(pt, pytensor, params)
    kwargs = {} if mode is None else {"mode": mode}
    return pytensor.function(inputs, outputs, **kwargs)


def _pt_power(pt, pytensor, values):
    A, k = pt.vector("A"), pt.iscalar("k")
    result, _ = pytensor.scan(lambda prior, A: prior * A, outputs_info=pt.ones_like(A), non_sequences=A, n_steps=k)
    return [A, k], result[-1]


def _pt_polynomial(pt, pytensor, values):
    c, x = pt.vector("c"), pt.scalar("x", dtype="float64")
    comps, _ = pytensor.scan(lambda a, p, v: a * v ** p, sequences=[c, pt.arange(values["n"])], non_sequences=x)
    return [c, x], comps.sum()


def _pt_running_sum(pt, pytensor, values):
    x = pt.vector("x", dtype="float64")
    out, _ = pytensor.scan(lambda v, acc: acc + v, sequences=x, outputs_info=pt.as_tensor_variable(np.float64(0)))
    return [x], out


def _pt_elman(pt, pytensor, values):
    X = pt.tensor3("X", dtype="float64")
    W_in, W_h = pt.matrix("W_in", dtype="float64"), pt.matrix("W_h", dtype="float64")
    b, h0 = pt.vector("b", dtype="float64"), pt.matrix("h0", dtype="float64")
    hs, _ = pytensor.scan(lambda x_t, h, W_in, W_h, b: pt.tanh(pt.dot(x_t, W_in) + pt.dot(h, W_h) + b),
                          sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    return [X, W_in, W_h, b, h0], hs


def _pt_taps_rnn(pt, pytensor, values):
    def step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = pt.tanh(pt.dot(x_tm1, W) + pt.dot(u_t, W_in_1) + pt.dot(u_tm4, W_in_2) + pt.dot(y_tm1, W_feedback))
        return [x_t, pt.dot(x_tm3, W_out)]

    Ws = [pt.matrix(n, dtype="float64") for n in ("W", "W_in_1", "W_in_2", "W_feedback", "W_out")]
    u, x0, y0 = pt.matrix("u", dtype="float64"), pt.matrix("x0", dtype="float64"), pt.vector("y0", dtype="float64")
    (xs, ys), _ = pytensor.scan(step, sequences=dict(input=u, taps=[-4, 0]),
                                outputs_info=[dict(initial=x0, taps=[-3, -1]), y0], non_sequences=Ws)
    return [u, x0, y0] + Ws, [xs, ys]


def _pt_while(pt, pytensor, values):
    from pytensor.scan.utils import until

    x0, limit = pt.scalar("x0", dtype="float64"), pt.scalar("limit", dtype="float64")
    out, _ = pytensor.scan(lambda x, lim: (1.0001 * x + 1e-4, until(1.0001 * x + 1e-4 > lim)),
                           outputs_info=x0, non_sequences=limit, n_steps=values["max_steps"])
    return [x0, limit], out


def _pt_mit_sot(pt, pytensor, values):
    init = pt.vector("init", dtype="float64")
    out, _ = pytensor.scan(lambda a2, a1: 0.5 * a1 + 0.5 * a2 + 1.0, outputs_info=dict(initial=init, taps=[-2, -1]),
                           n_steps=values["n"])
    return [init], out


def _pt_sum_max(pt, pytensor, values):
    x = pt.vector("x", dtype="float64")
    total, _ = pytensor.scan(lambda v, acc: acc + v, sequences=x, outputs_info=pt.as_tensor_variable(np.float64(0)))
    peak, _ = pytensor.scan(lambda v, m: pt.maximum(m, v), sequences=x,
                            outputs_info=pt.as_tensor_variable(np.float64(-np.inf)))
    return [x], [total, peak]


def _pt_set_subtensor(pt, pytensor, values):
    location, vals = pt.imatrix("location"), pt.vector("values", dtype="float64")
    model = pt.matrix("m", dtype="float64")

    def set_value_at_position(a_location, a_value, output_model):
        return pt.set_subtensor(pt.zeros_like(output_model)[a_location[0], a_location[1]], a_value)

    result, _ = pytensor.scan(set_value_at_position, sequences=[location, vals], non_sequences=model)
    return [location, vals, model], result


def _pt_kalman(pt, pytensor, values):
    y, T, Z, Hc, Qc = (pt.matrix(n, dtype="float64") for n in ("y", "T", "Z", "Hc", "Qc"))
    a0, P0 = pt.vector("a0", dtype="float64"), pt.matrix("P0", dtype="float64")
    constant = values["n_obs"] * np.log(2 * np.pi)

    def step(y_t, a, P, ll, T, Z, Q, H):
        a, P = pt.dot(T, a), pt.dot(pt.dot(T, P), T.T) + Q
        v, F = y_t - pt.dot(Z, a), pt.dot(pt.dot(Z, P), Z.T) + H
        _, log_det = pt.linalg.slogdet(F)
        ll = ll - 0.5 * (constant + log_det + pt.dot(v, pt.linalg.solve(F, v)))
        K = pt.dot(pt.dot(P, Z.T), pt.linalg.inv(F))
        return a + pt.dot(K, v), P - pt.dot(pt.dot(K, Z), P), ll

    (_, _, lls), _ = pytensor.scan(step, sequences=y, outputs_info=[a0, P0, pt.as_tensor_variable(np.float64(0))],
                                   non_sequences=[T, Z, pt.dot(Qc, Qc.T), pt.dot(Hc, Hc.T)])
    return [y, T, Z, Hc, Qc, a0, P0], lls[-1]


def _pt_hmm(pt, pytensor, values):
    from pytensor.tensor.special import log_softmax

    y, log_alpha0 = pt.ivector("y"), pt.vector("log_alpha0", dtype="float64")
    A, B = pt.matrix("A_logits", dtype="float64"), pt.matrix("B_logits", dtype="float64")

    def step(y_t, log_alpha, log_A, log_B):
        return pt.logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y_t]

    log_alphas, _ = pytensor.scan(step, sequences=y, outputs_info=log_alpha0,
                                  non_sequences=[log_softmax(A, axis=-1), log_softmax(B, axis=-1)])
    return [y, A, B, log_alpha0], pt.logsumexp(log_alphas[-1])


def _pt_lstm(pt, pytensor, values):
    X, W, U = pt.tensor3("X", dtype="float64"), pt.matrix("W", dtype="float64"), pt.matrix("U", dtype="float64")
    b, h0, c0 = pt.vector("b", dtype="float64"), pt.matrix("h0", dtype="float64"), pt.matrix("c0", dtype="float64")
    H = values["n_hidden"]

    def step(x_t, h, c, W, U, b):
        z = pt.dot(x_t, W) + pt.dot(h, U) + b
        i, f, o = pt.sigmoid(z[:, :H]), pt.sigmoid(z[:, H:2 * H]), pt.sigmoid(z[:, 2 * H:3 * H])
        c = f * c + i * pt.tanh(z[:, 3 * H:])
        return o * pt.tanh(c), c

    (hs, _), _ = pytensor.scan(step, sequences=X, outputs_info=[h0, c0], non_sequences=[W, U, b])
    return [X, W, U, b, h0, c0], hs


_PYTENSOR = {"W1": _pt_power, "W2": _pt_polynomial, "W3": _pt_running_sum, "W4": _pt_elman, "W5": _pt_taps_rnn,
             "W6": _pt_while, "W7": _pt_mit_sot, "W8": _pt_sum_max, "W9": _pt_set_subtensor, "K1": _pt_kalman,
             "H1": _pt_hmm, "W10": _pt_lstm}


# ---------------------------------------------------------------------------- JAX
def warm_up_jax() -> None:
    """JAX's one-time start before any timing: its runtime, and its LAPACK kernels, which
    import scipy (0.2 s here) the first time a jitted function factorises a matrix."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    jax.block_until_ready(jax.jit(lambda a: jnp.linalg.inv(a) + jnp.linalg.slogdet(a)[1])(np.eye(2)))


def jax_function(name: str, params: dict) -> Callable:
    """A jitted JAX function for workload ``name`` (float64 enabled); static sizes from params."""
    import jax

    jax.config.update("jax_enable_x64", True)
    fn, finish = _JAX[name](params), None
    if isinstance(fn, tuple):
        fn, finish = fn
    jitted = jax.jit(fn)

    def run(*args):
        out = jitted(*args)
        out = [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]
        return finish(out) if finish else out

    return run


def _jax_power(values):
    import jax
    import jax.numpy as jnp

    k = int(values["k"])

    def fn(A, _k):
        last, _ = jax.lax.scan(lambda p, _: (p * A, None), jnp.ones_like(A), None, length=k)
        return last

    return fn


def _jax_polynomial(values):
    import jax
    import jax.numpy as jnp

    def fn(c, x):
        def step(carry, inputs):
            a, p = inputs
            return carry, a * x ** p

        _, comps = jax.lax.scan(step, 0.0, (c, jnp.arange(c.shape[0], dtype=jnp.int64)))
        return comps.sum()

    return fn


def _jax_running_sum(values):
    import jax

    def fn(x):
        _, out = jax.lax.scan(lambda acc, v: (acc + v, acc + v), 0.0, x)
        return out

    return fn


def _jax_elman(values):
    import jax
    import jax.numpy as jnp

    def fn(X, W_in, W_h, b, h0):
        def step(h, x_t):
            h = jnp.tanh(x_t @ W_in + h @ W_h + b)
            return h, h

        _, hs = jax.lax.scan(step, h0, X)
        return hs

    return fn


def _jax_taps_rnn(values):
    import jax
    import jax.numpy as jnp

    def fn(u, x0, y0, W, W_in_1, W_in_2, W_feedback, W_out):
        def step(carry, us):
            (x3, x2, x1), y1 = carry
            u_tm4, u_t = us
            x_t = jnp.tanh(x1 @ W + u_t @ W_in_1 + u_tm4 @ W_in_2 + y1 @ W_feedback)
            y_t = x3 @ W_out
            return ((x2, x1, x_t), y_t), (x_t, y_t)

        _, (xs, ys) = jax.lax.scan(step, ((x0[0], x0[1], x0[2]), y0), (u[:-4], u[4:]))
        return xs, ys

    return fn


def _jax_while(values):
    import jax
    import jax.numpy as jnp

    max_steps = values["max_steps"]

    def fn(x0, limit):
        def cond(state):
            i, x, _ = state
            return (i == 0) | ((x <= limit) & (i < max_steps))

        def body(state):
            i, x, buf = state
            x = 1.0001 * x + 1e-4
            return i + 1, x, buf.at[i].set(x)

        steps, _, buf = jax.lax.while_loop(cond, body, (0, x0, jnp.zeros(max_steps)))
        return buf, steps

    return fn, lambda out: [out[0][:int(out[1])]]


def _jax_mit_sot(values):
    import jax

    def fn(init):
        def step(carry, _):
            a2, a1 = carry
            x = 0.5 * a1 + 0.5 * a2 + 1.0
            return (a1, x), x

        _, out = jax.lax.scan(step, (init[0], init[1]), None, length=values["n"])
        return out

    return fn


def _jax_sum_max(values):
    import jax
    import jax.numpy as jnp

    def fn(x):
        def step(carry, v):
            acc, best = carry
            acc, best = acc + v, jnp.maximum(best, v)
            return (acc, best), (acc, best)

        _, (s, m) = jax.lax.scan(step, (0.0, -jnp.inf), x)
        return s, m

    return fn


def _jax_set_subtensor(values):
    import jax
    import jax.numpy as jnp

    def fn(location, vals, model):
        def step(carry, inputs):
            loc, v = inputs
            return carry, jnp.zeros_like(model).at[loc[0], loc[1]].set(v)

        _, out = jax.lax.scan(step, 0, (location, vals))
        return out

    return fn


def _jax_kalman(values):
    import jax
    import jax.numpy as jnp

    constant = values["n_obs"] * np.log(2 * np.pi)

    def fn(y, T, Z, Hc, Qc, a0, P0):
        Q, H = Qc @ Qc.T, Hc @ Hc.T

        def step(carry, y_t):
            a, P, ll = carry
            a, P = T @ a, T @ P @ T.T + Q
            v, F = y_t - Z @ a, Z @ P @ Z.T + H
            _, log_det = jnp.linalg.slogdet(F)
            ll = ll - 0.5 * (constant + log_det + v @ jnp.linalg.solve(F, v))
            K = P @ Z.T @ jnp.linalg.inv(F)
            return (a + K @ v, P - K @ Z @ P, ll), None

        (_, _, ll), _ = jax.lax.scan(step, (a0, P0, jnp.float64(0.0)), y)
        return ll

    return fn


def _jax_hmm(values):
    import jax
    from jax.nn import log_softmax
    from jax.scipy.special import logsumexp

    def fn(y, A, B, log_alpha0):
        log_A, log_B = log_softmax(A, axis=-1), log_softmax(B, axis=-1)

        def step(log_alpha, y_t):
            return logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, y_t], None

        log_alpha, _ = jax.lax.scan(step, log_alpha0, y)
        return logsumexp(log_alpha)

    return fn


def _jax_lstm(values):
    import jax
    import jax.numpy as jnp

    H = values["n_hidden"]

    def fn(X, W, U, b, h0, c0):
        def step(carry, x_t):
            h, c = carry
            z = x_t @ W + h @ U + b
            i, f, o = jax.nn.sigmoid(z[:, :H]), jax.nn.sigmoid(z[:, H:2 * H]), jax.nn.sigmoid(z[:, 2 * H:3 * H])
            c = f * c + i * jnp.tanh(z[:, 3 * H:])
            h = o * jnp.tanh(c)
            return (h, c), h

        _, hs = jax.lax.scan(step, (h0, c0), X)
        return hs

    return fn


_JAX = {"W1": _jax_power, "W2": _jax_polynomial, "W3": _jax_running_sum, "W4": _jax_elman, "W5": _jax_taps_rnn,
        "W6": _jax_while, "W7": _jax_mit_sot, "W8": _jax_sum_max, "W9": _jax_set_subtensor, "K1": _jax_kalman,
        "H1": _jax_hmm, "W10": _jax_lstm}

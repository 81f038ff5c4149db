"""Differential tests that mode jax cannot pass as written, each with the reason (README, mode
jax). ``tests/conftest.py`` marks their mode-jax cases: a test that needs what XLA cannot do
is an expected failure raising ``NotLowerable`` (strict: the day it passes, the entry goes; an
entry names a test, or one case of it with its id); a
test that compares numpy's random streams number by number is skipped (mode jax draws from
``jax.random``; tests/backends/test_jax.py checks its draws' laws, seeding and updates)."""

NOT_LOWERABLE = "XLA's shapes are static: mode jax refuses this with NotLowerable"
NUMPY_DRAWS = "compares numpy's random draws number by number; mode jax draws from jax.random"

EXPECTED_NOT_LOWERABLE = {
    # a row whose length changes from step to step (mode py's error is raised per step)
    "tests/scan/test_errors.py::test_output_shape_changing_at_a_later_step",
    "tests/scan/test_errors.py::test_map_output_shape_changing_between_steps",
    "tests/scan/test_outputs.py::test_step_changing_shape_is_an_error[jax-nit_sot]",
    # a loop with until inside another loop (its outputs' lengths vary per outer step)
    "tests/scan/test_nesting_and_free_vars.py::test_nested_while_loop_inside_a_for_loop",
    # checkpoints: each segment's step count is computed inside the outer loop
    "tests/scan/test_checkpoints.py::test_fn_updates_run_once_per_step",
    "tests/scan/test_checkpoints.py::test_tap_minus_one_dict_is_a_sit_sot",
    "tests/scan/test_checkpoints.py::test_grad_of_an_rnn",
    # outputs whose lengths depend on values inside a loop: unique, lstsq's residuals, eig
    "tests/tensor/test_unique_bartlett.py::test_unique_matches_numpy",
    "tests/tensor/test_unique_bartlett.py::test_unique_in_a_loop",
    "tests/tensor/test_linalg_more.py::test_values_match_numpy_and_scipy",
    "tests/tensor/test_linalg_more.py::test_inside_a_loop_numba_compiles_expm_and_lstsq",
    "tests/tensor/test_linalg_more.py::test_eig_is_complex_and_matches_numpy_up_to_order_and_phase",
}

COMPARES_NUMPY_DRAWS = {
    "tests/scan/test_nesting_and_free_vars.py::test_a_draw_made_outside_fn_is_drawn_again_at_every_step",
    "tests/scan/test_nesting_and_free_vars.py::test_a_draw_passed_as_a_non_sequence_is_drawn_once",
    "tests/scan/test_nesting_and_free_vars.py::test_a_draw_used_inside_and_outside_a_loop",
    "tests/tensor/test_random.py::test_function_applies_the_default_update",
    "tests/tensor/test_random.py::test_scan_draws_with_updates_change_between_calls",
    "tests/tensor/test_random.py::test_scan_draws_without_updates_repeat_and_keep_the_state",
    "tests/tensor/test_random.py::test_gibbs_sampler_is_reproducible_for_a_seed",
    "tests/tensor/test_random.py::test_multinomial_inside_scan_advances_each_step",
}

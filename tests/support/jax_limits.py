"""Differential tests that mode jax cannot pass as written, each with the reason (README, mode
jax). ``tests/conftest.py`` marks their mode-jax cases: a test that needs what XLA cannot do
is an expected failure raising ``NotLowerable`` (strict: the day it passes, the entry goes; an
entry names a test, or one case of it with its id); a
test that compares numpy's random streams number by number is skipped (mode jax draws from
``jax.random``; tests/backends/test_jax.py checks its draws' laws, seeding and updates), and so
is a test of per-loop profiles."""

NOT_LOWERABLE = "mode jax refuses this with NotLowerable (XLA's static shapes, or an op a test defines)"
NUMPY_DRAWS = "compares numpy's random draws number by number; mode jax draws from jax.random"

EXPECTED_NOT_LOWERABLE = {
    # a row whose length changes from step to step (mode py's error is raised per step)
    "tests/scan/test_errors.py::test_output_shape_changing_at_a_later_step",
    "tests/scan/test_errors.py::test_map_output_shape_changing_between_steps",
    "tests/scan/test_outputs.py::test_step_changing_shape_is_an_error[jax-nit_sot]",
    "tests/backends/test_until_growth.py::test_a_row_of_another_shape_raises_as_before",
    "tests/onnx/test_import_loops.py::test_loop_nested_in_a_loop_reads_the_outer_iteration_number",
    # a loop with until inside another loop (its outputs' lengths vary per outer step)
    "tests/scan/test_nesting_and_free_vars.py::test_nested_while_loop_inside_a_for_loop",
    "tests/backends/test_until_growth.py::test_a_while_loop_inside_a_scan",
    # ops the tests define (with perform only): no JAX lowering
    "tests/backends/test_reference.py::test_runtime_error_names_the_op_and_input_types",
    "tests/backends/test_reference.py::test_runtime_error_with_an_unusual_constructor_keeps_its_type",
    "tests/compile/test_function.py::test_op_raising_at_run_time_leaves_shared_state_unchanged",
    # checkpoints: each segment's step count is computed inside the outer loop
    "tests/scan/test_checkpoints.py::test_fn_updates_run_once_per_step",
    "tests/scan/test_checkpoints.py::test_tap_minus_one_dict_is_a_sit_sot",
    "tests/scan/test_checkpoints.py::test_grad_of_an_rnn",
    # outputs whose lengths depend on values: unique, lstsq's residuals; eig (no lowering yet)
    "tests/tensor/test_unique_bartlett.py::test_unique_matches_numpy",
    "tests/tensor/test_unique_bartlett.py::test_unique_in_a_loop",
    "tests/tensor/test_linalg_more.py::test_values_match_numpy_and_scipy",
    "tests/tensor/test_linalg_more.py::test_inside_a_loop_numba_compiles_expm_and_lstsq",
    "tests/tensor/test_linalg_more.py::test_eig_is_complex_and_matches_numpy_up_to_order_and_phase",
}

NO_PROFILE = "mode jax runs a function as one XLA program: scan(profile=True) times no loop alone (it warns)"
PROFILES = {
    "tests/compile/test_profile.py::test_profiled_scan_counts_calls_and_time",
    "tests/compile/test_profile.py::test_only_profiled_scans_are_recorded",
    "tests/compile/test_profile.py::test_each_function_has_its_own_profile",
    "tests/compile/test_profile.py::test_two_profiled_scans_with_one_name_get_two_records",
    "tests/compile/test_profile.py::test_unnamed_profiled_scans_get_a_record_each",
    "tests/compile/test_profile.py::test_nested_profiled_scan_counts_each_inner_run",
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

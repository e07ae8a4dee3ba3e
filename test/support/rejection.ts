import { expect } from 'vitest';
import { ProctorError } from '../../src/errors.js';

/** What `promise` rejected with; fails the test when it resolved. */
export const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
};

/** The ProctorError `promise` rejected with (a target's classified failure). */
export const proctorError = async (promise: Promise<unknown>): Promise<ProctorError> => {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(ProctorError);
  return error as ProctorError;
};

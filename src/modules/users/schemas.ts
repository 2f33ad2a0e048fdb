import { z } from 'zod';
import { MAX_PASSWORD_LENGTH } from './passwords.ts';

/** Field rules shared by every route that takes user fields (admin create, signup, password flows). */
export const emailSchema = z.email().max(254);
export const nameSchema = z.string().trim().min(1).max(100);
export const usernameSchema = z.string().trim().min(1).max(64).regex(/^[\p{L}\p{N}._@+-]+$/u, 'letters, digits and . _ @ + - only');
export const passwordSchema = z.string().min(1).max(MAX_PASSWORD_LENGTH);

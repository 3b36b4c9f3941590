/** Types of scripts/require-node.js (plain JavaScript, so that an older Node can run it). */
export declare const REQUIRED_MAJOR: number;
export declare function nodeVersionProblem(version: string, execPath: string): string | undefined;

import type { Middleware } from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import { ALL_QUEUES, getQueue } from '../../shared/queues';
import type { Config } from '../../shared/config';
import { safeEqual } from '../../shared/crypto/secretBox';

export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Bull Board for operators at /admin/queues. It shows every tenant's jobs, so it is not a tenant
 * feature: it is guarded by operator credentials (HTTP Basic, BULL_BOARD_USER / BULL_BOARD_PASSWORD).
 * Without them configured the board is switched off (404) rather than left open.
 */
export function bullBoard(cfg: Config): Middleware {
  const { user, password } = cfg.bullBoard;
  // Not async on the way past: every other request goes straight on, without a promise of its own.
  if (!user || !password) {
    return (ctx, next) => {
      if (!isBoardPath(ctx.path)) return next();
      ctx.status = 404;
      ctx.body = { error: { message: 'Bull Board is disabled: set BULL_BOARD_USER and BULL_BOARD_PASSWORD', code: 'NOT_FOUND', status: 404 } };
      return Promise.resolve();
    };
  }
  const adapter = new KoaAdapter();
  createBullBoard({
    queues: ALL_QUEUES.map((q) => new BullMQAdapter(getQueue(q))),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Accounting queues' } },
  });
  adapter.setBasePath(BULL_BOARD_PATH);
  const board = adapter.registerPlugin();
  const guarded: Middleware = async (ctx, next) => {
    const m = /^Basic\s+(.+)$/i.exec(ctx.get('Authorization'));
    const [u, ...rest] = m ? Buffer.from(m[1], 'base64').toString('utf8').split(':') : [];
    const ok = m !== null && safeEqual(u ?? '', user) && safeEqual(rest.join(':'), password);
    if (!ok) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Basic realm="Bull Board", charset="UTF-8"');
      ctx.body = { error: { message: 'Operator credentials required', code: 'UNAUTHORIZED', status: 401 } };
      return;
    }
    await board(ctx, next);
  };
  return (ctx, next) => (isBoardPath(ctx.path) ? guarded(ctx, next) : next());
}

const isBoardPath = (path: string) => path === BULL_BOARD_PATH || path.startsWith(`${BULL_BOARD_PATH}/`);

/** The paged lists' envelope (docs/lists.md): the page asked for, its size, the exact total and the number of pages. */
export const pageEnvelope = (q: { page: number; limit: number }, total: number) => ({
  page: q.page,
  limit: q.limit,
  total,
  totalPages: Math.ceil(total / q.limit),
});

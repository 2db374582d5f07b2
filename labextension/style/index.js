import './base.css';
import './cell.css';
import './modeltext.css';
